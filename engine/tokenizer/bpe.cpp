// Priority-queue BPE merge loop (see bpe.h). The order of merges is exactly "lowest rank first,
// leftmost first among equal ranks", the rule of the GPT-2 reference and llama.cpp's
// llm_bigram_bpe queue; stale queue entries are recognised by their recorded ids.
#include "bpe.h"

#include <algorithm>

namespace dloop::engine {
namespace {

constexpr size_t kMaxPiece = size_t{1} << 24;

// std heap functions build a max-heap; "greater" puts the lowest rank, then leftmost, on top.
bool later(const BpeMerges::Workspace::Candidate& a, const BpeMerges::Workspace::Candidate& b) {
  if (a.rank != b.rank) return a.rank > b.rank;
  return a.left > b.left;
}

}  // namespace

bool BpeMerges::add(int32_t left, int32_t right, int32_t result, int32_t rank) {
  return merges_.emplace(key(left, right), Merge{rank, result}).second;
}

void BpeMerges::push_candidate(Workspace& ws, int32_t left) const {
  if (left < 0) return;
  const Workspace::Symbol& l = ws.symbols[left];
  if (l.next < 0) return;
  const Workspace::Symbol& r = ws.symbols[l.next];
  auto it = merges_.find(key(l.id, r.id));
  if (it == merges_.end()) return;
  ws.heap.push_back({it->second.rank, left, l.id, r.id});
  std::push_heap(ws.heap.begin(), ws.heap.end(), later);
}

void BpeMerges::apply(std::string_view piece, const std::array<int32_t, 256>& byte_tokens,
                      std::vector<int32_t>& out, Workspace& ws) const {
  if (piece.size() > kMaxPiece) {  // keeps symbol indices in int32; merges never span chunks
    for (size_t i = 0; i < piece.size(); i += kMaxPiece) apply(piece.substr(i, kMaxPiece), byte_tokens, out, ws);
    return;
  }
  if (piece.size() == 1) {
    out.push_back(byte_tokens[static_cast<unsigned char>(piece[0])]);
    return;
  }
  ws.symbols.clear();
  ws.heap.clear();
  auto n = static_cast<int32_t>(piece.size());
  for (int32_t i = 0; i < n; ++i) {
    ws.symbols.push_back({byte_tokens[static_cast<unsigned char>(piece[i])], i - 1, i + 1 < n ? i + 1 : -1});
  }
  for (int32_t i = 0; i + 1 < n; ++i) push_candidate(ws, i);
  while (!ws.heap.empty()) {
    std::pop_heap(ws.heap.begin(), ws.heap.end(), later);
    Workspace::Candidate c = ws.heap.back();
    ws.heap.pop_back();
    Workspace::Symbol& l = ws.symbols[c.left];
    if (l.id != c.left_id || l.next < 0 || ws.symbols[l.next].id != c.right_id) continue;  // stale
    Workspace::Symbol& r = ws.symbols[l.next];
    l.id = merges_.at(key(c.left_id, c.right_id)).result;
    r.id = -1;
    l.next = r.next;
    if (l.next >= 0) ws.symbols[l.next].prev = c.left;
    push_candidate(ws, l.prev);
    push_candidate(ws, c.left);
  }
  for (int32_t i = 0; i >= 0; i = ws.symbols[i].next) out.push_back(ws.symbols[i].id);
}

}  // namespace dloop::engine
