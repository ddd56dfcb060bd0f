// The key check and the duplicate check; see key_check.h and docs/tool-calls.md "Key check",
// "Duplicate check".
#include "key_check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>
#include <string>

#include "dloop/engine/model.h"
#include "dloop/engine/tokenizer.h"
#include "logits.h"
#include "schema_support.h"
#include "spans.h"

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

// The arguments as both checks write them: `{"key": value, ...}`, values in Python style, ", "
// between members; with the byte ranges (in text) of each member's key name (inside its quotes)
// and of its value.
struct ArgumentsText {
  std::string text;
  std::vector<std::pair<size_t, size_t>> keys;
  std::vector<std::pair<size_t, size_t>> values;
};

ArgumentsText write_arguments(const base::Json& args) {
  ArgumentsText out;
  out.text.push_back('{');  // (a string literal assignment here trips GCC 12's -Wrestrict)
  for (const auto& [key, value] : args.as_object()) {
    if (out.text.size() > 1) out.text += ", ";
    const std::string quoted = base::json_quote(key);
    out.keys.emplace_back(out.text.size() + 1, out.text.size() + quoted.size() - 1);
    out.text += quoted;
    out.text += ": ";
    const size_t value_at = out.text.size();
    out.text += value.dump(base::Json::Style::kPython);
    out.values.emplace_back(value_at, out.text.size());
  }
  out.text += "}";
  return out;
}

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
  const ArgumentsText written = write_arguments(args);
  for (const auto& [b, e] : written.keys) keys.emplace_back(text.size() + b, text.size() + e);
  text += written.text;
  for (const FixedPiece& p : spec.suffix) piece(p);
  flush();
  return out;
}

// The arguments' members the checks may move or replace: top-level strings and numbers whose
// schema is not an enum/const literal (a literal the model chose among stays).
std::vector<size_t> movable_members(const base::Schema& schema, const base::Json& arguments) {
  std::vector<size_t> movable;
  const base::Json::Object& members = arguments.as_object();
  for (size_t i = 0; i < members.size(); ++i) {
    const base::Json& v = members[i].second;
    if (!v.is_string() && !v.is_number()) continue;
    const base::SchemaNode* node = schema.root().property(members[i].first);
    if (node && (node->enum_values || node->const_value)) continue;
    movable.push_back(i);
  }
  return movable;
}

// The assignments of the movable members' values to their keys (permutations, the identity
// first) that the schema accepts, each distinct one once, appended to out; `seen` holds the
// dumps of the calls already there.
void add_assignments(const base::Schema& schema, const base::Json& arguments, const std::vector<size_t>& movable,
                     std::set<std::string>& seen, std::vector<base::Json>& out) {
  const base::Json::Object& members = arguments.as_object();
  std::vector<size_t> perm(movable.size());
  std::iota(perm.begin(), perm.end(), 0);
  do {
    base::Json c = arguments;
    base::Json::Object& cm = c.as_object();
    for (size_t j = 0; j < movable.size(); ++j) cm[movable[j]].second = members[movable[perm[j]]].second;
    if (!schema.validate(c).ok()) continue;
    if (!seen.insert(c.dump()).second) continue;
    out.push_back(std::move(c));
  } while (std::next_permutation(perm.begin(), perm.end()));
}

// Scores candidate calls by the reverse question: each is written out with its key names masked,
// and scored by the log-probability of their tokens (mask excluded), one pass each. Returns the
// index of the best (ties keep the earlier one), or nullopt when a call cannot be scored (its key
// positions are unknown, or it does not fit the context): then nothing is changed.
struct Scored {
  std::optional<size_t> best;
  int64_t forward_passes = 0;
  double forward_ms = 0;
};

base::Result<Scored> best_by_keys(const InfillContext& ctx, std::span<const int32_t> prompt, const KeyCheckSpec& spec,
                                  const std::vector<base::Json>& candidates) {
  Scored out;
  const ModelConfig& config = ctx.model.config();
  const auto V = static_cast<size_t>(config.n_vocab);
  double best_score = -INFINITY;
  size_t best = 0;
  std::vector<float> logits;
  for (size_t ci = 0; ci < candidates.size(); ++ci) {
    const Rendered r = render(ctx, spec, candidates[ci]);
    if (!r.ok || r.key_positions.empty()) return out;
    std::vector<int32_t> canvas(prompt.begin(), prompt.end());
    canvas.insert(canvas.end(), r.tokens.begin(), r.tokens.end());
    if (static_cast<int64_t>(canvas.size()) > config.n_ctx) return out;
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
    out.forward_ms += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    ++out.forward_passes;
    double score = 0;
    for (size_t k = 0; k < rows.size(); ++k) {
      const float* l = logits.data() + k * V;
      score += static_cast<double>(l[r.tokens[r.key_positions[k]]]) - log_sum_exp_except(l, V, ctx.vocab.mask);
    }
    if (score > best_score) {
      best_score = score;
      best = ci;
    }
  }
  out.best = best;
  return out;
}

// The text of the call's arguments before and after member `at`'s value, as render() writes them.
std::pair<std::string, std::string> around_member(const base::Json& args, size_t at) {
  const ArgumentsText written = write_arguments(args);
  const auto [b, e] = written.values.at(at);
  return {written.text.substr(0, b), written.text.substr(e)};
}

// The value the model picks for member `at` among `values` (the rest of the call written out),
// by the infiller's literal choice: one pass, each value scored by the mean log-probability of
// its tokens where it would go.
base::Result<base::Json> pick_value(const InfillContext& ctx, std::span<const int32_t> prompt, const KeyCheckSpec& spec,
                                    const base::Json& args, size_t at, std::vector<base::Json> values,
                                    DuplicateCheckResult& result) {
  DLOOP_ASSIGN_OR_RETURN(base::Schema choice,
                         base::Schema::compile(base::Json::object({{"enum", base::Json::array(std::move(values))}})));
  auto [before, after] = around_member(args, at);
  InfillSpec is;
  is.prefix = spec.prefix;
  is.prefix.push_back(FixedPiece{before, -1});
  is.root = &choice.root();
  is.suffix.push_back(FixedPiece{after, -1});
  is.suffix.insert(is.suffix.end(), spec.suffix.begin(), spec.suffix.end());
  InfillOptions o;
  o.min_answer_length = spec.answer_length;
  o.copy_repair = false;
  DLOOP_ASSIGN_OR_RETURN(InfillResult filled, infill(ctx, prompt, is, o));
  result.forward_passes += filled.forward_passes;
  result.forward_ms += filled.forward_ms;
  std::string head, tail;
  for (const FixedPiece& p : is.prefix) head += p.special >= 0 ? "" : p.text;
  for (const FixedPiece& p : is.suffix) tail += p.special >= 0 ? "" : p.text;
  if (filled.text.size() < head.size() + tail.size()) {
    return base::internal_error("duplicate check: the infilled call is shorter than its fixed text: " + filled.text);
  }
  return base::Json::parse(filled.text.substr(head.size(), filled.text.size() - head.size() - tail.size()));
}

}  // namespace

base::Result<DuplicateCheckResult> check_duplicates(const InfillContext& ctx, std::span<const int32_t> prompt,
                                                    const KeyCheckSpec& spec, const base::Json& arguments,
                                                    bool with_assignments) {
  DuplicateCheckResult result;
  result.arguments = arguments;
  if (!arguments.is_object() || spec.schema == nullptr) return result;
  const std::vector<size_t> movable = movable_members(*spec.schema, arguments);
  std::vector<std::string> spans;  // of the conversation, listed at the first duplicate
  bool listed = false;
  std::vector<bool> done(movable.size(), false);
  for (size_t g = 0; g < movable.size(); ++g) {
    if (done[g]) continue;
    const base::Json::Object& members = result.arguments.as_object();
    const std::string shared = members[movable[g]].second.dump();
    std::vector<size_t> group;  // members holding the same value
    for (size_t h = g; h < movable.size(); ++h) {
      if (!done[h] && members[movable[h]].second.dump() == shared) {
        group.push_back(movable[h]);
        done[h] = true;
      }
    }
    if (group.size() < 2) continue;
    // The value picks write the call with a span in place of one value: it must fit the context
    // (a span has at most kDuplicateSpanBytes tokens).
    const Rendered decoded = render(ctx, spec, result.arguments);
    if (prompt.size() + decoded.tokens.size() + kDuplicateSpanBytes > static_cast<size_t>(ctx.model.config().n_ctx)) {
      return result;
    }
    if (!listed) {
      std::string prompt_text;
      for (int32_t t : prompt) prompt_text += ctx.vocab.text[static_cast<size_t>(t)];
      spans = conversation_spans(conversation_text(prompt_text), kDuplicateSpanWords, kDuplicateSpanBytes);
      listed = true;
    }
    std::set<std::string> taken;  // values no replacement may repeat
    for (size_t m : movable) taken.insert(members[m].second.dump());
    std::vector<base::Json> candidates;
    std::set<std::string> seen;
    const bool assign = with_assignments && movable.size() <= kMaxKeyCheckValues;
    if (assign) add_assignments(*spec.schema, result.arguments, movable, seen, candidates);
    if (candidates.empty()) {
      candidates.push_back(result.arguments);
      seen.insert(result.arguments.dump());
    }
    const size_t original = candidates.size();
    for (size_t at : group) {
      const bool number = members[at].second.is_number();
      const base::SchemaNode* node = spec.schema->root().property(members[at].first);
      const bool integer = node && (node->types & base::kSchemaInteger) && !(node->types & base::kSchemaNumber);
      std::vector<base::Json> values;
      for (const std::string& s : spans) {
        if (values.size() >= kMaxEnumValues) break;
        base::Json v(s);
        if (number) {
          if (!plain_number(s, integer)) continue;
          auto parsed = base::Json::parse(s);
          if (!parsed.ok()) continue;
          v = *parsed;
        }
        if (taken.count(v.dump())) continue;
        base::Json call = result.arguments;
        call.as_object()[at].second = v;
        if (!spec.schema->validate(call).ok()) continue;
        values.push_back(std::move(v));
      }
      if (values.empty()) continue;
      DLOOP_ASSIGN_OR_RETURN(base::Json picked, pick_value(ctx, prompt, spec, result.arguments, at, std::move(values), result));
      base::Json call = result.arguments;
      call.as_object()[at].second = std::move(picked);
      if (assign) {
        add_assignments(*spec.schema, call, movable, seen, candidates);
      } else if (seen.insert(call.dump()).second) {
        candidates.push_back(std::move(call));
      }
    }
    if (candidates.size() == original) continue;
    DLOOP_ASSIGN_OR_RETURN(Scored scored, best_by_keys(ctx, prompt, spec, candidates));
    result.forward_passes += scored.forward_passes;
    result.forward_ms += scored.forward_ms;
    result.candidates += static_cast<int>(candidates.size());
    if (!scored.best) continue;
    result.assigned = result.assigned || assign;
    if (*scored.best != 0) result.changed = true;
    result.arguments = std::move(candidates[*scored.best]);
  }
  return result;
}

base::Result<KeyCheckResult> check_keys(const InfillContext& ctx, std::span<const int32_t> prompt,
                                        const KeyCheckSpec& spec, const base::Json& arguments) {
  KeyCheckResult result;
  result.arguments = arguments;
  if (!arguments.is_object() || spec.schema == nullptr) return result;
  const std::vector<size_t> movable = movable_members(*spec.schema, arguments);
  if (movable.size() < 2 || movable.size() > kMaxKeyCheckValues) return result;

  std::vector<base::Json> candidates;
  std::set<std::string> seen;
  add_assignments(*spec.schema, arguments, movable, seen, candidates);
  if (candidates.size() < 2) return result;  // the identity comes first

  DLOOP_ASSIGN_OR_RETURN(Scored scored, best_by_keys(ctx, prompt, spec, candidates));
  result.forward_passes = scored.forward_passes;
  result.forward_ms = scored.forward_ms;
  if (!scored.best) return result;
  result.assignments = static_cast<int>(candidates.size());
  result.changed = *scored.best != 0;
  result.arguments = std::move(candidates[*scored.best]);
  return result;
}

}  // namespace dloop::engine::toolcall
