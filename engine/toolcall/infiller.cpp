// The infilling decoder; see infiller.h and docs/tool-calls.md.
// The layout is a list of pieces (committed text, special tokens, masked slots, pending choices)
// grown from a work stack that walks the schema; expansion stops at a choice that changes the
// layout, which is scored in the next pass (or, with exact_prefix_choices, once everything before
// it is committed; an array's "another item or the end" always waits so). Finished slots lose
// their padding and become text again, so the committed prefix is re-tokenised as the model saw
// such text in training.
#include "infiller.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string_view>

#include "infiller_impl.h"
#include "logits.h"
#include "spans.h"

namespace dloop::engine::toolcall {

using base::SchemaNode;

std::string merge_tail(const std::string& text) {
  size_t i = text.size();
  auto punct = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x80 && u > 0x20 && !std::isalnum(u);
  };
  while (i > 0 && punct(text[i - 1])) --i;
  if (i < text.size() && i > 0 && text[i - 1] == ' ') --i;
  return text.substr(i);
}

namespace detail {
namespace {

// Code points of the JSON string content `body` (escapes count as one; body is valid content).
uint64_t json_string_length(std::string_view body) {
  uint64_t n = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    const auto c = static_cast<unsigned char>(body[i]);
    if (c == '\\') {
      ++i;  // the escaped byte
    } else if ((c & 0xC0) == 0x80) {
      continue;  // a UTF-8 continuation byte
    }
    ++n;
  }
  return n;
}

}  // namespace

void Infiller::build_canvas() {
  canvas_ = prompt_;
  piece_start_.assign(pieces_.size(), -1);
  choice_tokens_.assign(pieces_.size(), {});
  choice_scored_.assign(pieces_.size(), 0);
  rows_.clear();
  bool clean = true;  // every piece so far is committed
  for (size_t i = 0; i < pieces_.size(); ++i) {
    Piece& p = pieces_[i];
    if (p.kind == Piece::kText) {
      std::string text = p.text;
      if (i + 1 < pieces_.size() && pieces_[i + 1].kind == Piece::kChoice) {
        Piece& c = pieces_[i + 1];
        if (!c.blocking || clean || !(o_.exact_prefix_choices || c.array_continuation)) {
          c.text = merge_tail(text);  // the choice's tail for this pass
          text.resize(text.size() - c.text.size());
        }
      }
      for (int32_t t : ctx_.tokenizer.encode(text, false)) canvas_.push_back(t);
    } else if (p.kind == Piece::kSpecial) {
      canvas_.push_back(p.token);
    } else if (p.kind == Piece::kSlot) {
      piece_start_[i] = static_cast<int64_t>(canvas_.size());
      for (int32_t t : slots_[static_cast<size_t>(p.slot)].tokens) {
        if (t == kMasked) rows_.push_back(static_cast<int32_t>(canvas_.size()));
        canvas_.push_back(t == kMasked ? ctx_.vocab.mask : t);
      }
      clean = false;
    } else {  // choice
      const bool scored = !p.blocking || clean || !(o_.exact_prefix_choices || p.array_continuation);
      const std::string tail = (i > 0 && pieces_[i - 1].kind == Piece::kText && scored) ? p.text : std::string();
      if (!scored) { clean = false; continue; }
      size_t len = 0;
      for (const Candidate& c : p.cands) {
        std::vector<std::vector<int32_t>> per_text;
        for (const std::string& t : c.texts) {
          per_text.push_back(ctx_.tokenizer.encode(tail + t, false));
          len = std::max(len, per_text.back().size());
        }
        for (auto& v : per_text) choice_tokens_[i].push_back(std::move(v));
      }
      piece_start_[i] = static_cast<int64_t>(canvas_.size());
      choice_scored_[i] = 1;
      for (size_t k = 0; k < len; ++k) {
        rows_.push_back(static_cast<int32_t>(canvas_.size()));
        canvas_.push_back(ctx_.vocab.mask);
      }
      clean = false;
    }
  }
  layout_end_ = canvas_.size();
  const auto answer = static_cast<int64_t>(canvas_.size() - prompt_.size());
  // The padding after the layout (masks while a choice blocks the layout, so the model sees that
  // more follows; end-of-text up to min_answer_length) is cut at the context: it is a hint, and
  // only the layout itself must fit.
  const int64_t room = std::max<int64_t>(answer, ctx_.model.config().n_ctx - static_cast<int64_t>(prompt_.size()));
  if (blocked_) {
    const int64_t target = std::min(room, std::max<int64_t>(o_.min_answer_length, answer + 16));
    canvas_.resize(prompt_.size() + static_cast<size_t>(target), ctx_.vocab.mask);
  } else if (answer < o_.min_answer_length) {
    canvas_.resize(prompt_.size() + static_cast<size_t>(std::min(room, o_.min_answer_length)), ctx_.eos);
  }
  row_of_.assign(canvas_.size(), -1);
  for (size_t r = 0; r < rows_.size(); ++r) row_of_[static_cast<size_t>(rows_[r])] = static_cast<int32_t>(r);
}

double Infiller::logp(size_t row, int32_t token) const {
  const size_t V = static_cast<size_t>(ctx_.vocab.n_vocab);
  return static_cast<double>(logits_[row * V + static_cast<size_t>(token)]) - lse_[row];
}

base::Status Infiller::pass() {
  build_canvas();
  const ModelConfig& c = ctx_.model.config();
  if (static_cast<int64_t>(canvas_.size()) > c.n_ctx) {
    return base::invalid_argument("the prompt plus the tool-call canvas (" + std::to_string(canvas_.size()) +
                                  " tokens) exceeds the model's context length " + std::to_string(c.n_ctx));
  }
  const size_t V = static_cast<size_t>(c.n_vocab);
  if (rows_.empty()) return base::internal_error("tool-call infilling: a pass with nothing to decode");
  std::vector<int32_t> model_rows;
  for (int32_t p : rows_) model_rows.push_back(c.shift_logits ? std::max<int32_t>(p - 1, 0) : p);
  logits_.resize(rows_.size() * V);
  auto t0 = Clock::now();
  const PassHint hint{static_cast<int64_t>(prompt_.size()), -1, false};
  DLOOP_RETURN_IF_ERROR(ctx_.forwarder.forward(canvas_, model_rows, logits_.data(), hint));
  result_.forward_ms += ms_since(t0);
  ++result_.forward_passes;
  if (trace_) {
    std::string shown;
    for (size_t p = prompt_.size(); p < canvas_.size(); ++p) {
      shown += canvas_[p] == ctx_.vocab.mask ? std::string("_") : "[" + ctx_.vocab.text[static_cast<size_t>(canvas_[p])] + "]";
    }
    std::fprintf(stderr, "pass %lld: %s\n", static_cast<long long>(result_.forward_passes), shown.c_str());
  }
  auto t1 = Clock::now();
  lse_.assign(rows_.size(), 0);
  for (size_t r = 0; r < rows_.size(); ++r) {
    lse_[r] = log_sum_exp_except(logits_.data() + r * V, V, ctx_.vocab.mask);
  }
  commit_slots();
  // Choices: the best candidate by mean log-probability of its tokens at the region's positions.
  for (size_t i = pieces_.size(); i-- > 0;) {
    if (!choice_scored_[i]) continue;
    const Piece& p = pieces_[i];
    const auto& all = choice_tokens_[i];
    // The first position where the candidates' tokens differ (all of them have a token there).
    size_t diff = std::numeric_limits<size_t>::max();
    if (p.array_continuation) {
      for (size_t j = 0;; ++j) {
        bool ends = false, differs = false;
        for (const auto& toks : all) {
          if (j >= toks.size()) { ends = true; break; }
          if (toks[j] != all[0][j]) differs = true;
        }
        if (ends) break;
        if (differs) { diff = j; break; }
      }
    }
    const std::vector<bool> fits = candidates_fit(i);
    size_t k = 0, best = 0;
    double best_score = -INFINITY;
    for (size_t ci = 0; ci < p.cands.size(); ++ci) {
      if (!fits[ci]) {
        if (trace_) std::fprintf(stderr, "  choice piece %zu: %s does not fit the context\n", i, p.cands[ci].texts[0].c_str());
        k += p.cands[ci].texts.size();
        continue;
      }
      for (size_t ti = 0; ti < p.cands[ci].texts.size(); ++ti, ++k) {
        const auto& toks = all[k];
        auto at = [&](size_t j) {
          return logp(static_cast<size_t>(row_of_[static_cast<size_t>(piece_start_[i]) + j]), toks[j]);
        };
        double s = 0;
        if (diff != std::numeric_limits<size_t>::max()) {
          s = at(diff);
        } else {
          for (size_t j = 0; j < toks.size(); ++j) s += at(j);
          if (!p.score_sum) s /= static_cast<double>(std::max<size_t>(toks.size(), 1));
        }
        s += p.cands[ci].log_prior;
        if (trace_) std::fprintf(stderr, "  choice piece %zu: %s %.3f\n", i, p.cands[ci].texts[ti].c_str(), s);
        if (s > best_score) { best_score = s; best = ci; }
      }
    }
    resolve_choice(i, best);
  }
  result_.sampling_ms += ms_since(t1);
  DLOOP_RETURN_IF_ERROR(expand());
  propagate_and_finalize();
  return base::Status();
}

// A string slot committed up to a space whose every masked position now predicts padding (the
// single space, or the closing quote): the model reads the value as over. The slot is closed at
// its first masked position (the trailing space is dropped at finalisation) instead of taking
// one padding token a pass, during which the model used to write junk after the padding
// (`"Berg                      ["`). A value whose next word is still to come is not closed: its
// next position predicts the word. The space before is required because the single space is
// also content between words, predicted as padding in the pass before the next word shows.
void Infiller::close_if_padding(const Slot& s, const SlotDp& dp, std::vector<Pred>& preds) const {
  if (preds.empty()) return;
  const size_t first = preds[0].pos;
  for (size_t j = 0; j < first; ++j) {
    if (s.tokens[j] == kMasked) return;
  }
  if (first == 0 || ctx_.vocab.text[static_cast<size_t>(s.tokens[first - 1])] != " ") return;
  int32_t quote = -1;
  for (const Pred& p : preds) {
    const std::string& t = ctx_.vocab.text[static_cast<size_t>(p.token)];
    if (t != " " && t != "\"") return;
    if (t == "\"") quote = p.token;
  }
  if (quote < 0) quote = ctx_.vocab.quote;
  if (quote < 0 || !slot_allows(*s.aut, dp, first, quote)) return;
  const size_t piece = preds[0].piece;
  preds.assign(1, Pred{piece, first, quote, 1.0});
}

void Infiller::commit_slots() {
  // Per slot, the predictions of its masked positions in order (left to right).
  std::vector<std::vector<Pred>> per_slot;
  for (size_t i = 0; i < pieces_.size(); ++i) {
    if (pieces_[i].kind != Piece::kSlot) continue;
    Slot& s = slots_[static_cast<size_t>(pieces_[i].slot)];
    SlotDp dp = slot_dp(*s.aut, s.tokens);
    per_slot.emplace_back();
    for (size_t j = 0; j < s.tokens.size(); ++j) {
      if (s.tokens[j] != kMasked) {
        if ((o_.slot_left_to_right || s.grounded) && !per_slot.back().empty()) break;  // only the first masked run
        continue;
      }
      const auto row = static_cast<size_t>(row_of_[static_cast<size_t>(piece_start_[i]) + j]);
      std::vector<int32_t> allowed = slot_allowed(*s.aut, dp, j);
      DLOOP_ASSERT(!allowed.empty());
      if (s.grounded) {
        // The text before j: committed tokens, then this pass's predictions before j (committed
        // only if this one is reached: slots left to right).
        std::vector<int32_t> before(s.tokens.begin(), s.tokens.begin() + static_cast<long>(j));
        for (const Pred& p : per_slot.back()) before[p.pos] = p.token;
        ground(s, before, allowed);
      }
      int32_t best = allowed[0];
      double best_l = -INFINITY, sum = 0;
      for (int32_t t : allowed) {
        const double l = logp(row, t);
        if (l > best_l) { best_l = l; best = t; }
      }
      for (int32_t t : allowed) sum += std::exp(logp(row, t) - best_l);
      per_slot.back().push_back({i, j, best, allowed.size() == 1 ? 1.0 : 1.0 / sum});
      if (trace_ && per_slot.back().size() <= 3) {  // the top 3 tokens of the first 3 masked positions
        std::vector<std::pair<double, int32_t>> top;
        for (int32_t t : allowed) top.push_back({logp(row, t), t});
        std::partial_sort(top.begin(), top.begin() + std::min<size_t>(3, top.size()), top.end(), std::greater<>());
        std::fprintf(stderr, "  slot piece %zu pos %zu:", i, j);
        for (size_t k = 0; k < std::min<size_t>(3, top.size()); ++k) {
          std::fprintf(stderr, " [%s] %.2f", ctx_.vocab.text[static_cast<size_t>(top[k].second)].c_str(),
                       std::exp(top[k].first - best_l) / sum);
        }
        std::fputc('\n', stderr);
      }
      // Without slots left to right, a grounded slot offers one position a pass: its predictions
      // may be committed in any order, and each depends on the one before.
      if (s.grounded && !o_.slot_left_to_right) break;
    }
    if (!s.is_number) close_if_padding(s, dp, per_slot.back());
  }
  auto commit = [&](const Pred& p) {
    Slot& s = slots_[static_cast<size_t>(pieces_[p.piece].slot)];
    SlotDp dp = slot_dp(*s.aut, s.tokens);
    if (!slot_allows(*s.aut, dp, p.pos, p.token)) return false;
    s.tokens[p.pos] = p.token;
    return true;
  };
  if (o_.slot_left_to_right) {
    // Each slot commits its leftmost masked positions while they are confident; the most
    // confident leftmost position overall is committed when no slot has one.
    size_t committed = 0;
    const Pred* fallback = nullptr;
    for (const auto& preds : per_slot) {
      if (preds.empty()) continue;
      if (!fallback || preds[0].conf > fallback->conf) fallback = &preds[0];
      for (const Pred& p : preds) {
        if (p.conf < o_.threshold || !commit(p)) break;
        ++committed;
      }
    }
    if (committed == 0 && fallback) commit(*fallback);
    return;
  }
  std::vector<Pred> preds;
  for (const auto& v : per_slot) preds.insert(preds.end(), v.begin(), v.end());
  if (preds.empty()) return;
  std::stable_sort(preds.begin(), preds.end(), [](const Pred& a, const Pred& b) { return a.conf > b.conf; });
  size_t take = 0;
  while (take < preds.size() && preds[take].conf >= o_.threshold) ++take;
  take = std::max<size_t>(take, 1);
  if (o_.max_commits_per_pass > 0) take = std::min<size_t>(take, static_cast<size_t>(o_.max_commits_per_pass));
  for (size_t k = 0; k < take; ++k) commit(preds[k]);
}

// Which candidates of blocking choice i leave a layout that fits the model's context: the layout
// so far (with the choice's masked region), plus the least the candidate adds, plus the least the
// work after it adds. An optional member or another array item that cannot fit is not offered (the array
// closes instead of failing the call at the next pass); when none fits, all are offered and the
// call fails at the next pass with the context error.
std::vector<bool> Infiller::candidates_fit(size_t i) const {
  const Piece& p = pieces_[i];
  std::vector<bool> fits(p.cands.size(), true);
  if (!p.blocking || i + 1 != pieces_.size()) return fits;
  int64_t rest = static_cast<int64_t>(layout_end_);  // with the choice's masked region: a few tokens to spare
  for (const Work& w : stack_) rest += min_tokens(w);
  const int64_t n_ctx = ctx_.model.config().n_ctx;
  bool any = false;
  for (size_t ci = 0; ci < p.cands.size(); ++ci) {
    int64_t need = rest;
    for (const Work& w : p.cands[ci].then) need += min_tokens(w);
    fits[ci] = need <= n_ctx;
    any = any || fits[ci];
  }
  if (!any) fits.assign(p.cands.size(), true);
  return fits;
}

void Infiller::resolve_choice(size_t i, size_t cand) {
  Piece& p = pieces_[i];
  if (!p.blocking) {
    // A literal: its single text work becomes committed text in place.
    const std::string text = p.cands[cand].then[0].text;
    p.kind = Piece::kText;
    p.text = text;
    p.cands.clear();
    merge_text();
    return;
  }
  std::vector<Work> then = std::move(p.cands[cand].then);
  pieces_.erase(pieces_.begin() + static_cast<long>(i));
  blocked_ = false;
  for (auto it = then.rbegin(); it != then.rend(); ++it) stack_.push_back(*it);
}

void Infiller::propagate_and_finalize() {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < pieces_.size(); ++i) {
      if (pieces_[i].kind != Piece::kSlot) continue;
      Slot& s = slots_[static_cast<size_t>(pieces_[i].slot)];
      for (size_t j = 0; j < s.tokens.size(); ++j) {
        if (s.tokens[j] != kMasked) continue;
        SlotDp dp = slot_dp(*s.aut, s.tokens);
        auto allowed = slot_allowed(*s.aut, dp, j, 2);
        if (allowed.size() == 1) { s.tokens[j] = allowed[0]; changed = true; }
      }
      if (std::find(s.tokens.begin(), s.tokens.end(), kMasked) == s.tokens.end()) {
        finalize_slot(i);
        changed = true;
        break;
      }
    }
  }
}

void Infiller::finalize_slot(size_t i) {
  const Slot& s = slots_[static_cast<size_t>(pieces_[i].slot)];
  std::string text;
  for (int32_t t : s.tokens) text += ctx_.vocab.text[static_cast<size_t>(t)];
  if (s.is_number) {
    while (!text.empty() && text.back() == ' ') text.pop_back();
    text = clamp_number_text(text, s.range, s.integer);
    if (o_.copy_repair && offer_copies(i, s, text)) return;
  } else {
    const size_t q = text.rfind('"');
    DLOOP_ASSERT(q != std::string::npos);
    text.resize(q);
    // The padding token is the single space, which is also string content: a model that commits
    // padding before the closing quote leaves the value with trailing spaces. They are read as
    // padding (dropped) as far as the schema's minLength allows. A space is never the tail of an
    // escape.
    uint64_t length = json_string_length(text);
    while (!text.empty() && text.back() == ' ' && length > s.min_length) {
      text.pop_back();
      --length;
    }
    if (o_.copy_repair && offer_copies(i, s, text)) return;
    text += '"';
  }
  pieces_[i].kind = Piece::kText;
  pieces_[i].text = text;
  pieces_[i].slot = -1;
  merge_text();
}

namespace {

// Copy repair's largest edit distance (values of 16 characters and more).
constexpr size_t kMaxRepairEdits = 8;
// Copy repair's longest completion.
constexpr size_t kMaxCompletionBytes = 64;

// Levenshtein distance of a and b, or limit + 1 once it is certainly above limit.
size_t edit_distance(std::string_view a, std::string_view b, size_t limit) {
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) > limit) return limit + 1;
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    size_t row_min = cur[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min > limit) return limit + 1;
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

// Spans of the prompt's text nearest to `value` (at most half its length in edits, rounded down,
// and at most kMaxRepairEdits; none below 4 characters), starting and ending at word boundaries,
// that the slot could hold; empty when the value occurs verbatim. At most 4, in order of appearance.
std::vector<std::string> Infiller::near_spans(const Slot& s, const std::string& value) {
  std::vector<std::string> out;
  if (value.size() < 4 || value.find('\\') != std::string::npos) return out;
  const std::string& text = prompt_text();
  if (whole_occurrences(text, value) > 0) return out;  // copied verbatim
  const size_t limit = std::min<size_t>(value.size() / 2, kMaxRepairEdits);
  size_t best = limit + 1;
  for (size_t i = 0; i < text.size(); ++i) {
    if (span_separator(text[i]) || !span_start(text, i)) continue;
    for (size_t len = value.size() > limit ? value.size() - limit : 1; len <= value.size() + limit; ++len) {
      const size_t j = i + len;
      if (j > text.size()) break;
      if (span_separator(text[j - 1]) || !span_end(text, j)) continue;
      const std::string_view span(text.data() + i, len);
      bool clean = true;
      for (char c : span) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || c == '"' || c == '\\') { clean = false; break; }
      }
      if (!clean) continue;
      const size_t d = edit_distance(value, span, std::min(limit, best));
      if (d > std::min(limit, best)) continue;
      if (s.is_number) {
        if (!plain_number(span, s.integer) || clamp_number_text(std::string(span), s.range, s.integer) != span) continue;
      } else {
        const uint64_t n = json_string_length(span);
        if (n < s.min_length || (s.max_length >= 0 && n > static_cast<uint64_t>(s.max_length))) continue;
      }
      if (d < best) { best = d; out.clear(); }
      if (std::find(out.begin(), out.end(), span) == out.end() && out.size() < 4) out.emplace_back(span);
    }
  }
  return out;
}

// Copy repair's completions of `value`: the longer units of the conversation it begins
// (spans.h span_completions) that the slot could hold.
std::vector<std::string> Infiller::completions(const Slot& s, const std::string& value) {
  std::vector<std::string> out;
  if (value.empty() || value.find('\\') != std::string::npos) return out;
  for (std::string& c : span_completions(ground_text(), value, kMaxCompletionBytes)) {
    if (s.is_number) {
      if (!plain_number(c, s.integer) || clamp_number_text(c, s.range, s.integer) != c) continue;
    } else {
      const uint64_t n = json_string_length(c);
      if (n < s.min_length || (s.max_length >= 0 && n > static_cast<uint64_t>(s.max_length))) continue;
    }
    out.push_back(std::move(c));
  }
  return out;
}

const std::string& Infiller::prompt_text() {
  if (prompt_text_.empty()) {
    for (int32_t t : prompt_) prompt_text_ += ctx_.vocab.text[static_cast<size_t>(t)];
  }
  return prompt_text_;
}

// The prompt's text without its system turns (which hold the tool schemas): the text of each
// ChatML turn (after `<|im_start|>` and its role line, up to `<|im_end|>`) whose role is not
// `system`, joined by newlines. A prompt without ChatML markers is used whole.
const std::string& Infiller::ground_text() {
  if (!ground_built_) ground_text_ = conversation_text(prompt_text());
  ground_built_ = true;
  return ground_text_;
}

// Grounded values (InfillOptions::ground_values, x-dloop-grounded): keeps in `allowed` (the slot
// automaton's tokens at position j) the tokens that continue the slot's text before j (`before`,
// all committed) along a span of the conversation starting at a word boundary, and the value's
// end (the string's closing quote, a number's padding) where that text is a whole span. Leaves
// `allowed` as is when the text before j is not all committed, the value is already over, the
// text is nowhere in the conversation, or nothing would be left.
void Infiller::ground(const Slot& s, std::span<const int32_t> before, std::vector<int32_t>& allowed) {
  std::string value;
  for (int32_t t : before) {
    if (t == kMasked) return;
    const std::string& tt = ctx_.vocab.text[static_cast<size_t>(t)];
    if (!s.is_number && tt == "\"") return;  // the closing quote: padding follows
    if (s.is_number && tt == " ") return;     // a number's padding
    value += tt;
  }
  // The single space is both content and padding: a value followed by spaces may be over.
  size_t core = value.size();
  while (core > 0 && value[core - 1] == ' ') --core;
  const size_t spaces = value.size() - core;
  const std::string_view v(value.data(), core);
  const std::string& text = ground_text();
  std::vector<size_t> starts;  // where the value without its trailing spaces occurs at a word start
  for (size_t at = 0; at < text.size(); ++at) {
    if (span_separator(text[at]) || !span_start(text, at)) continue;
    if (text.compare(at, v.size(), v) == 0) starts.push_back(at);
  }
  if (starts.empty()) return;
  bool whole = false;  // the value is a whole span the slot may hold
  if (!v.empty() && !std::strchr(".?!,;:", v.back())) {
    for (size_t at : starts) {
      if (span_end(text, at + v.size())) { whole = true; break; }
    }
    const std::string vs(v);
    if (whole && s.is_number) whole = plain_number(vs, s.integer) && clamp_number_text(vs, s.range, s.integer) == vs;
    if (whole && !s.is_number) {
      const uint64_t n = json_string_length(vs);
      whole = n >= s.min_length && (s.max_length < 0 || n <= static_cast<uint64_t>(s.max_length));
    }
  }
  std::vector<int32_t> kept;
  for (int32_t t : allowed) {
    const std::string& tt = ctx_.vocab.text[static_cast<size_t>(t)];
    bool ok = false;
    if (tt == "\"" || tt == " ") ok = whole;  // the end of the value, or padding after it
    if (!ok && spaces <= 1 && tt.find_first_of("\"\\") == std::string::npos) {
      const std::string cont = value.substr(core) + tt;  // continues the span
      for (size_t at : starts) {
        if (text.compare(at + v.size(), cont.size(), cont) != 0) continue;
        // A sentence's end (`.?!` before a space or the end of the text) ends the span: a value
        // may not take the full stop after `Bergen.` nor run on into the next sentence.
        bool sentence_end = false;
        for (size_t k = at + v.size(); k < at + v.size() + cont.size() && !sentence_end; ++k) {
          sentence_end = std::strchr(".?!", text[k]) &&
                         (k + 1 == text.size() || std::isspace(static_cast<unsigned char>(text[k + 1])));
        }
        if (!sentence_end) { ok = true; break; }
      }
    }
    if (ok) kept.push_back(t);
  }
  if (kept.empty()) {
    // A dead end (the span goes on with a character no token here may hold, or ends in
    // punctuation): the value may end here.
    for (int32_t t : allowed) {
      const std::string& tt = ctx_.vocab.text[static_cast<size_t>(t)];
      if (!v.empty() && (tt == "\"" || tt == " ")) kept.push_back(t);
    }
  }
  if (!kept.empty()) allowed = std::move(kept);
}

// Copy repair's prior: argument values are copied from the conversation far more often than not.
// A near span gets log(0.9 / 0.1) added to its summed log-probability against the decoded value,
// so the model keeps a value of its own only when it prefers it by more than that.
constexpr double kCopyLogPrior = 2.1972245773362196;

// Copy repair (InfillOptions::copy_repair) of the finished slot `i` holding `value`. A value with one
// completion (completions()) is replaced by it in `value` (false: no choice, the caller writes it);
// one with several, or with near spans (near_spans()) and none, makes the slot a literal choice
// among them (near spans with the decoded value and the copy prior), scored in the next pass
// (true). A string slot's opening quote moves from the text before it into the candidates, as for
// enum literals.
bool Infiller::offer_copies(size_t i, const Slot& s, std::string& value) {
  // A value that stops short of the unit of the conversation it begins is completed: in place
  // when there is one completion, by the model's choice among them when there are several.
  std::vector<std::string> spans = completions(s, value);
  const bool completing = !spans.empty();
  if (spans.size() == 1) {
    if (trace_) std::fprintf(stderr, "copy repair: %s completed to [%s]\n", value.c_str(), spans[0].c_str());
    value = spans[0];
    return false;
  }
  // What each candidate writes when chosen: a near span that stops short of the unit it begins
  // (`panda warm` of `'panda warm galaxy orchid'`) is scored as it is and written completed.
  std::vector<std::string> writes;
  if (!completing) {
    spans = near_spans(s, value);
    for (const std::string& near : spans) {
      std::vector<std::string> whole = completions(s, near);
      writes.push_back(whole.size() == 1 ? whole[0] : near);
    }
  } else {
    writes = spans;
  }
  if (spans.empty()) return false;
  const bool quoted = !s.is_number;
  if (quoted && (i == 0 || pieces_[i - 1].kind != Piece::kText || pieces_[i - 1].text.empty() ||
                 pieces_[i - 1].text.back() != '"')) {
    return false;
  }
  if (quoted) pieces_[i - 1].text.pop_back();
  std::vector<Candidate> cands;
  if (!completing) {
    spans.insert(spans.begin(), value);
    writes.insert(writes.begin(), value);
  }
  auto q = [&](const std::string& t) { return quoted ? "\"" + t + "\"" : t; };
  for (size_t k = 0; k < spans.size(); ++k) {
    Work w;
    w.text = q(writes[k]);
    cands.push_back({{q(spans[k])}, {w}, k == 0 || completing ? 0.0 : kCopyLogPrior});
  }
  Piece& p = pieces_[i];
  p.kind = Piece::kChoice;
  p.slot = -1;
  p.cands = std::move(cands);
  p.blocking = false;
  p.score_sum = true;
  if (trace_) {
    std::fprintf(stderr, "copy repair: %s ->", value.c_str());
    for (size_t k = completing ? 0 : 1; k < spans.size(); ++k) {
      std::fprintf(stderr, " [%s]%s%s", spans[k].c_str(), writes[k] == spans[k] ? "" : " writes ", writes[k] == spans[k] ? "" : writes[k].c_str());
    }
    std::fputc('\n', stderr);
  }
  return true;
}

void Infiller::merge_text() {
  std::vector<Piece> out;
  for (Piece& p : pieces_) {
    if (p.kind == Piece::kText && !out.empty() && out.back().kind == Piece::kText) {
      out.back().text += p.text;
    } else {
      out.push_back(std::move(p));
    }
  }
  pieces_ = std::move(out);
}

base::Result<InfillResult> Infiller::run(const InfillSpec& spec) {
  std::vector<Work> init;
  auto add_fixed = [&](const FixedPiece& f) {
    Work w;
    if (f.special >= 0) { w.kind = Work::kSpecial; w.token = f.special; } else { w.text = f.text; }
    init.push_back(w);
  };
  for (const FixedPiece& f : spec.prefix) add_fixed(f);
  Work root;
  root.kind = Work::kValue;
  root.node = spec.root;
  root.types = spec.root_types;
  init.push_back(root);
  for (const FixedPiece& f : spec.suffix) add_fixed(f);
  for (auto it = init.rbegin(); it != init.rend(); ++it) stack_.push_back(*it);
  DLOOP_RETURN_IF_ERROR(expand());
  propagate_and_finalize();
  for (int guard = 0; pending(); ++guard) {
    if (guard > 100000) return base::internal_error("tool-call infilling did not converge");
    DLOOP_RETURN_IF_ERROR(pass());
  }
  for (const Piece& p : pieces_) {
    if (p.kind == Piece::kText) {
      result_.text += p.text;
      for (int32_t t : ctx_.tokenizer.encode(p.text, false)) result_.answer.push_back(t);
    } else {
      result_.answer.push_back(p.token);
    }
  }
  return std::move(result_);
}

}  // namespace detail

base::Result<InfillResult> infill(const InfillContext& ctx, std::span<const int32_t> prompt, const InfillSpec& spec,
                                  const InfillOptions& options) {
  if (ctx.vocab.mask < 0) return base::invalid_argument("the model has no mask token");
  detail::Infiller f(ctx, prompt, options);
  return f.run(spec);
}

}  // namespace dloop::engine::toolcall
