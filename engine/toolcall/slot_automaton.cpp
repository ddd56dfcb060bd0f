// Slot automata and their feasibility dynamic program; see slot_automaton.h.
#include "slot_automaton.h"

#include <algorithm>

#include "dloop/base/status.h"

namespace dloop::engine::toolcall {
namespace {

// Code points in s when s is complete, valid UTF-8; -1 otherwise.
int utf8_code_points(const std::string& s) {
  int n = 0;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<uint8_t>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) return -1;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<uint8_t>(s[i + k]) & 0xC0) != 0x80) return -1;
    }
    i += len;
    ++n;
  }
  return n;
}

}  // namespace

VocabInfo VocabInfo::build(const Tokenizer& tokenizer, int32_t mask_id) {
  VocabInfo v;
  v.n_vocab = tokenizer.n_vocab();
  v.mask = mask_id;
  v.text.resize(static_cast<size_t>(v.n_vocab));
  v.usable.assign(static_cast<size_t>(v.n_vocab), 0);
  for (int32_t t = 0; t < v.n_vocab; ++t) {
    v.text[static_cast<size_t>(t)] = tokenizer.token_text(t);
    const TokenType type = tokenizer.token_type(t);
    if (type == TokenType::kControl || type == TokenType::kUserDefined || type == TokenType::kUnused) continue;
    if (t == mask_id || v.text[static_cast<size_t>(t)].empty()) continue;
    const int cp = utf8_code_points(v.text[static_cast<size_t>(t)]);
    if (cp < 0) continue;
    v.usable[static_cast<size_t>(t)] = 1;
    if (v.text[static_cast<size_t>(t)] == "\"" && v.quote < 0) v.quote = t;
    v.max_code_points = std::max(v.max_code_points, cp);
  }
  return v;
}

template <typename Step>
void SlotAutomaton::fill(const VocabInfo& vocab, int n_states, Step&& step_byte, std::vector<uint8_t> accept) {
  DLOOP_ASSERT(n_states < 32000);
  n_states_ = n_states;
  n_vocab_ = vocab.n_vocab;
  accept_ = std::move(accept);
  table_.assign(static_cast<size_t>(n_states) * static_cast<size_t>(n_vocab_), -1);
  tokens_from_.assign(static_cast<size_t>(n_states), {});
  succ_.assign(static_cast<size_t>(n_states), std::vector<uint8_t>(static_cast<size_t>(n_states), 0));
  for (int s = 0; s < n_states; ++s) {
    for (int32_t t = 0; t < n_vocab_; ++t) {
      if (!vocab.usable[static_cast<size_t>(t)]) continue;
      int cur = s;
      for (char ch : vocab.text[static_cast<size_t>(t)]) {
        cur = step_byte(cur, static_cast<uint8_t>(ch));
        if (cur < 0) break;
      }
      if (cur < 0) continue;
      table_[static_cast<size_t>(s) * static_cast<size_t>(n_vocab_) + static_cast<size_t>(t)] = static_cast<int16_t>(cur);
      tokens_from_[static_cast<size_t>(s)].push_back(t);
      succ_[static_cast<size_t>(s)][static_cast<size_t>(cur)] = 1;
    }
  }
}

std::shared_ptr<const SlotAutomaton> SlotAutomaton::string(const VocabInfo& vocab, uint64_t min_length,
                                                           std::optional<uint64_t> max_length, int64_t positions) {
  // A bound that `positions` tokens cannot reach does not constrain the slot.
  const uint64_t reach = static_cast<uint64_t>(std::max<int64_t>(positions, 1)) * static_cast<uint64_t>(vocab.max_code_points);
  if (max_length && *max_length >= reach) max_length.reset();
  const bool bounded = max_length.has_value();
  // Content(c) = c, Escape(c) = C+1+c, Closed = 2C+2; c saturates at C when unbounded.
  const int C = static_cast<int>(bounded ? *max_length : std::min<uint64_t>(min_length, reach));
  const int closed = 2 * C + 2;
  auto count_up = [&](int c) -> int {
    if (c + 1 <= C) return c + 1;
    return bounded ? -1 : C;
  };
  auto step_byte = [&](int s, uint8_t b) -> int {
    if (s == closed) return b == ' ' ? closed : -1;
    if (s > C) {  // escape
      const int c = s - C - 1;
      switch (b) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't': return count_up(c);
        default: return -1;
      }
    }
    const int c = s;
    if (b == '"') return static_cast<uint64_t>(c) >= min_length ? closed : -1;
    if (b == '\\') return C + 1 + c;
    if (b < 0x20) return -1;
    if ((b & 0xC0) == 0x80) return c;  // continuation byte: same code point
    return count_up(c);
  };
  std::vector<uint8_t> accept(static_cast<size_t>(closed + 1), 0);
  accept[static_cast<size_t>(closed)] = 1;
  auto a = std::make_shared<SlotAutomaton>();
  a->fill(vocab, closed + 1, step_byte, std::move(accept));
  return a;
}

std::shared_ptr<const SlotAutomaton> SlotAutomaton::number(const VocabInfo& vocab, bool integer, bool allow_minus) {
  enum { kStart, kMinus, kZero, kInt, kDot, kFrac, kDone, kN };
  auto digit = [](uint8_t b) { return b >= '0' && b <= '9'; };
  auto step_byte = [&](int s, uint8_t b) -> int {
    switch (s) {
      case kStart:
        if (b == '-') return allow_minus ? kMinus : -1;
        [[fallthrough]];
      case kMinus:
        if (b == '0') return kZero;
        return digit(b) ? kInt : -1;
      case kZero:
        if (b == '.') return integer ? -1 : kDot;
        return b == ' ' ? kDone : -1;
      case kInt:
        if (digit(b)) return kInt;
        if (b == '.') return integer ? -1 : kDot;
        return b == ' ' ? kDone : -1;
      case kDot:
        return digit(b) ? kFrac : -1;
      case kFrac:
        if (digit(b)) return kFrac;
        return b == ' ' ? kDone : -1;
      case kDone:
        return b == ' ' ? kDone : -1;
    }
    return -1;
  };
  std::vector<uint8_t> accept(kN, 0);
  accept[kZero] = accept[kInt] = accept[kFrac] = accept[kDone] = 1;
  auto a = std::make_shared<SlotAutomaton>();
  a->fill(vocab, kN, step_byte, std::move(accept));
  return a;
}

SlotDp slot_dp(const SlotAutomaton& a, std::span<const int32_t> tokens) {
  const size_t n = tokens.size(), S = static_cast<size_t>(a.n_states());
  SlotDp dp;
  dp.fwd.assign(n + 1, std::vector<uint8_t>(S, 0));
  dp.bwd.assign(n + 1, std::vector<uint8_t>(S, 0));
  dp.fwd[0][static_cast<size_t>(a.start())] = 1;
  for (size_t i = 0; i < n; ++i) {
    for (size_t s = 0; s < S; ++s) {
      if (!dp.fwd[i][s]) continue;
      if (tokens[i] != kMasked) {
        const int nx = a.step(static_cast<int>(s), tokens[i]);
        if (nx >= 0) dp.fwd[i + 1][static_cast<size_t>(nx)] = 1;
      } else {
        const auto& succ = a.successors(static_cast<int>(s));
        for (size_t q = 0; q < S; ++q) dp.fwd[i + 1][q] |= succ[q];
      }
    }
  }
  for (size_t s = 0; s < S; ++s) dp.bwd[n][s] = a.accepting(static_cast<int>(s)) ? 1 : 0;
  for (size_t i = n; i-- > 0;) {
    for (size_t s = 0; s < S; ++s) {
      if (tokens[i] != kMasked) {
        const int nx = a.step(static_cast<int>(s), tokens[i]);
        dp.bwd[i][s] = nx >= 0 && dp.bwd[i + 1][static_cast<size_t>(nx)];
      } else {
        const auto& succ = a.successors(static_cast<int>(s));
        uint8_t ok = 0;
        for (size_t q = 0; q < S && !ok; ++q) ok = succ[q] & dp.bwd[i + 1][q];
        dp.bwd[i][s] = ok;
      }
    }
  }
  dp.feasible = dp.bwd[0][static_cast<size_t>(a.start())] != 0;
  return dp;
}

bool slot_allows(const SlotAutomaton& a, const SlotDp& dp, size_t i, int32_t token) {
  if (token < 0) return false;
  for (size_t s = 0; s < static_cast<size_t>(a.n_states()); ++s) {
    if (!dp.fwd[i][s] || !dp.bwd[i][s]) continue;
    const int nx = a.step(static_cast<int>(s), token);
    if (nx >= 0 && dp.bwd[i + 1][static_cast<size_t>(nx)]) return true;
  }
  return false;
}

std::vector<int32_t> slot_allowed(const SlotAutomaton& a, const SlotDp& dp, size_t i, size_t limit) {
  std::vector<int32_t> out;
  std::vector<int32_t> live;
  for (size_t s = 0; s < static_cast<size_t>(a.n_states()); ++s) {
    if (dp.fwd[i][s] && dp.bwd[i][s]) live.push_back(static_cast<int32_t>(s));
  }
  if (live.empty()) return out;
  if (live.size() == 1) {
    for (int32_t t : a.tokens_from(live[0])) {
      const int nx = a.step(live[0], t);
      if (dp.bwd[i + 1][static_cast<size_t>(nx)]) {
        out.push_back(t);
        if (limit && out.size() >= limit) break;
      }
    }
    return out;
  }
  std::vector<uint8_t> seen;
  for (int32_t s : live) {
    for (int32_t t : a.tokens_from(s)) {
      const int nx = a.step(s, t);
      if (!dp.bwd[i + 1][static_cast<size_t>(nx)]) continue;
      if (seen.empty()) seen.assign(static_cast<size_t>(std::max<int32_t>(t + 1, 1)), 0);
      if (static_cast<size_t>(t) >= seen.size()) seen.resize(static_cast<size_t>(t) + 1, 0);
      if (seen[static_cast<size_t>(t)]) continue;
      seen[static_cast<size_t>(t)] = 1;
      out.push_back(t);
    }
  }
  std::sort(out.begin(), out.end());
  if (limit && out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace dloop::engine::toolcall
