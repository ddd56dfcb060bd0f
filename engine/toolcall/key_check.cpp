// The key check; see key_check.h and docs/tool-calls.md "Key check".
#include "key_check.h"
#include "logits.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <set>
#include <string>

#include "dloop/engine/model.h"
#include "dloop/engine/tokenizer.h"

namespace dloop::engine::toolcall {
namespace {

using Clock = std::chrono::steady_clock;

// The call's tokens after the prompt, and the positions (in them) of the tokens that overlap a
// key's name; empty when the tokens' bytes do not add up to the text (a tokenizer whose tokens
// are not byte spans of the text: the key positions would be guesses).
struct Rendered {
  std::vector<int32_t> tokens;
  std::vector<size_t> key_positions;
  bool ok = true;
};

Rendered render(const InfillContext& ctx, const KeyCheckSpec& spec, const base::Json& args) {
  Rendered out;
  std::string text;
  std::vector<std::pair<size_t, size_t>> keys;  // byte ranges of the key names in text
  auto flush = [&] {
    if (text.empty()) return;
    const std::vector<int32_t> ids = ctx.tokenizer.encode(text, false);
    size_t at = 0;
    for (int32_t id : ids) {
      const size_t len = ctx.tokenizer.token_text(id).size();
      for (const auto& [b, e] : keys) {
        if (at < e && at + len > b) {
          out.key_positions.push_back(out.tokens.size());
          break;
        }
      }
      out.tokens.push_back(id);
      at += len;
    }
    if (at != text.size()) out.ok = false;
    text.clear();
    keys.clear();
  };
  auto piece = [&](const FixedPiece& p) {
    if (p.special >= 0) {
      flush();
      out.tokens.push_back(p.special);
    } else {
      text += p.text;
    }
  };
  for (const FixedPiece& p : spec.prefix) piece(p);
  text += "{";
  bool first = true;
  for (const auto& [key, value] : args.as_object()) {
    if (!first) text += ", ";
    first = false;
    const std::string quoted = base::json_quote(key);
    keys.emplace_back(text.size() + 1, text.size() + quoted.size() - 1);
    text += quoted + ": " + value.dump(base::Json::Style::kPython);
  }
  text += "}";
  for (const FixedPiece& p : spec.suffix) piece(p);
  flush();
  return out;
}

}  // namespace

base::Result<KeyCheckResult> check_keys(const InfillContext& ctx, std::span<const int32_t> prompt,
                                        const KeyCheckSpec& spec, const base::Json& arguments) {
  KeyCheckResult result;
  result.arguments = arguments;
  if (!arguments.is_object() || spec.schema == nullptr) return result;
  const base::Json::Object& members = arguments.as_object();
  std::vector<size_t> movable;  // members whose values the check may move
  for (size_t i = 0; i < members.size(); ++i) {
    const base::Json& v = members[i].second;
    if (!v.is_string() && !v.is_number()) continue;
    const base::SchemaNode* node = spec.schema->root().property(members[i].first);
    if (node && (node->enum_values || node->const_value)) continue;  // a literal the model chose among
    movable.push_back(i);
  }
  if (movable.size() < 2 || movable.size() > kMaxKeyCheckValues) return result;

  // The assignments: permutations of the movable values that the schema accepts, each once.
  std::vector<base::Json> candidates;
  std::set<std::string> seen;
  std::vector<size_t> perm(movable.size());
  std::iota(perm.begin(), perm.end(), 0);
  do {
    base::Json c = arguments;
    base::Json::Object& cm = c.as_object();
    for (size_t j = 0; j < movable.size(); ++j) cm[movable[j]].second = members[movable[perm[j]]].second;
    if (!spec.schema->validate(c).ok()) continue;
    if (!seen.insert(c.dump()).second) continue;
    candidates.push_back(std::move(c));
  } while (std::next_permutation(perm.begin(), perm.end()));
  if (candidates.size() < 2) return result;  // identity first: next_permutation starts there

  const ModelConfig& config = ctx.model.config();
  const auto V = static_cast<size_t>(config.n_vocab);
  double best_score = -INFINITY;
  size_t best = 0;
  std::vector<float> logits;
  for (size_t ci = 0; ci < candidates.size(); ++ci) {
    const Rendered r = render(ctx, spec, candidates[ci]);
    if (!r.ok || r.key_positions.empty()) return result;
    std::vector<int32_t> canvas(prompt.begin(), prompt.end());
    canvas.insert(canvas.end(), r.tokens.begin(), r.tokens.end());
    if (static_cast<int64_t>(canvas.size()) > config.n_ctx) return result;
    const auto padded = static_cast<size_t>(std::min<int64_t>(
        config.n_ctx, static_cast<int64_t>(prompt.size()) + spec.answer_length));
    if (canvas.size() < padded) canvas.resize(padded, ctx.eos);
    std::vector<int32_t> rows;
    for (size_t p : r.key_positions) {
      const auto pos = static_cast<int32_t>(prompt.size() + p);
      canvas[static_cast<size_t>(pos)] = ctx.vocab.mask;
      rows.push_back(config.shift_logits ? std::max<int32_t>(pos - 1, 0) : pos);
    }
    logits.resize(rows.size() * V);
    const auto t0 = Clock::now();
    DLOOP_RETURN_IF_ERROR(ctx.forwarder.forward(canvas, rows, logits.data(),
                                                PassHint{static_cast<int64_t>(prompt.size()), -1, false}));
    result.forward_ms += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    ++result.forward_passes;
    double score = 0;  // log-probability of the key tokens (the mask token excluded)
    for (size_t k = 0; k < rows.size(); ++k) {
      const float* l = logits.data() + k * V;
      score += static_cast<double>(l[r.tokens[r.key_positions[k]]]) - log_sum_exp_except(l, V, ctx.vocab.mask);
    }
    if (score > best_score) {  // ties keep the earlier assignment (the decoded one first)
      best_score = score;
      best = ci;
    }
  }
  result.assignments = static_cast<int>(candidates.size());
  result.changed = best != 0;
  result.arguments = std::move(candidates[best]);
  return result;
}

}  // namespace dloop::engine::toolcall
