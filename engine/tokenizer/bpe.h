// Byte-pair merging of one pre-token: starts from the byte tokens of the piece and repeatedly
// applies the lowest-ranked merge (leftmost on ties) until none applies, with a priority queue
// over a linked list of symbols, O(n log n) in the piece length. Merges are stored by token id,
// so the merge loop never touches strings. Private to engine/tokenizer. Thread-safety: a
// BpeMerges is immutable after building; apply() uses a caller-owned workspace.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dloop::engine {

class BpeMerges {
 public:
  struct Workspace {
    struct Symbol {
      int32_t id;    // token id; -1 once merged into its left neighbour
      int32_t prev;  // index of the previous live symbol, -1 at the start
      int32_t next;  // index of the next live symbol, -1 at the end
    };
    struct Candidate {
      int32_t rank;
      int32_t left;  // symbol index of the left half (its original position breaks rank ties)
      int32_t left_id;
      int32_t right_id;
    };
    std::vector<Symbol> symbols;
    std::vector<Candidate> heap;
  };

  // Adds merge (left, right) -> result with the given rank; a pair already present keeps its
  // first (lower) rank. Returns whether it was added.
  bool add(int32_t left, int32_t right, int32_t result, int32_t rank);
  size_t size() const { return merges_.size(); }

  // Appends the token ids of `piece` to out. byte_tokens[b] is the token of byte b.
  void apply(std::string_view piece, const std::array<int32_t, 256>& byte_tokens, std::vector<int32_t>& out,
             Workspace& ws) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t result;
  };
  static uint64_t key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  void push_candidate(Workspace& ws, int32_t left) const;

  std::unordered_map<uint64_t, Merge> merges_;
};

}  // namespace dloop::engine
