// Token-level automata for the masked value slots of a tool call, and the dynamic program that
// keeps a partly committed slot completable (docs/tool-calls.md "Slots").
// A slot is a fixed number of canvas positions. Its language is a small automaton run over the
// bytes of each token: a string slot is content* '"' pad* (content: tokens that are complete UTF-8
// without '"', control characters or special tokens, with the JSON escapes \" \\ \/ \b \f \n \r \t;
// code points counted for minLength/maxLength), a number slot is JSON's number grammar without
// exponent (no leading zeros, at least one digit; no sign when the minimum is >= 0) then pad*. Pad
// is the single-space token. step() tables are precomputed for the whole vocabulary.
// Not thread-safe to build; a built automaton is immutable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dloop/engine/tokenizer.h"

namespace dloop::engine::toolcall {

// Per-token facts the automata need, computed once per tokenizer.
struct VocabInfo {
  std::vector<std::string> text;      // [n_vocab] token bytes
  std::vector<uint8_t> usable;        // [n_vocab] 1: not special/control, non-empty, complete UTF-8
  int32_t mask = -1;
  int32_t quote = -1;                 // the token that is exactly '"', -1 if none
  int32_t n_vocab = 0;
  int max_code_points = 1;            // most code points in one usable token
  static VocabInfo build(const Tokenizer& tokenizer, int32_t mask_id);
};

class SlotAutomaton {
 public:
  // String content with code-point bounds (max_length empty = unbounded). `positions` is the slot
  // budget (bounds that no n-position content can reach are dropped).
  static std::shared_ptr<const SlotAutomaton> string(const VocabInfo& vocab, uint64_t min_length,
                                                     std::optional<uint64_t> max_length, int64_t positions);
  static std::shared_ptr<const SlotAutomaton> number(const VocabInfo& vocab, bool integer, bool allow_minus);

  int n_states() const { return n_states_; }
  int start() const { return 0; }
  bool accepting(int s) const { return accept_[static_cast<size_t>(s)] != 0; }
  // The state after `token` from `s`, or -1.
  int step(int s, int32_t token) const {
    return table_[static_cast<size_t>(s) * static_cast<size_t>(n_vocab_) + static_cast<size_t>(token)];
  }
  const std::vector<int32_t>& tokens_from(int s) const { return tokens_from_[static_cast<size_t>(s)]; }
  // States reachable from s by one token (any).
  const std::vector<uint8_t>& successors(int s) const { return succ_[static_cast<size_t>(s)]; }

 private:
  template <typename Step>
  void fill(const VocabInfo& vocab, int n_states, Step&& step_byte, std::vector<uint8_t> accept);

  int n_states_ = 0;
  int32_t n_vocab_ = 0;
  std::vector<int16_t> table_;                   // [n_states x n_vocab] next state or -1
  std::vector<uint8_t> accept_;                  // [n_states]
  std::vector<std::vector<int32_t>> tokens_from_;  // per state: tokens with a transition
  std::vector<std::vector<uint8_t>> succ_;       // per state: [n_states] reachable by one token
};

// Forward (reachable) and backward (can still reach an accepting state) state sets of a slot whose
// positions hold committed tokens or kMasked.
constexpr int32_t kMasked = -1;
struct SlotDp {
  std::vector<std::vector<uint8_t>> fwd;  // [n+1][n_states]
  std::vector<std::vector<uint8_t>> bwd;  // [n+1][n_states]
  bool feasible = false;
};
SlotDp slot_dp(const SlotAutomaton& a, std::span<const int32_t> tokens);
// Whether `token` at masked position i keeps the slot completable.
bool slot_allows(const SlotAutomaton& a, const SlotDp& dp, size_t i, int32_t token);
// The tokens allowed at position i (up to `limit` of them; 0 = all).
std::vector<int32_t> slot_allowed(const SlotAutomaton& a, const SlotDp& dp, size_t i, size_t limit = 0);

}  // namespace dloop::engine::toolcall
