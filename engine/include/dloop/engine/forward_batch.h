// The forward pass over part of a canvas, for many sequences at once: the building block of the
// KV caches (engine/decoding/forwarder.cpp) and of cross-request batching. Each sequence names
// the canvas rows to compute, [lo, hi); their keys and values are written into the sequence's
// KvRows, and their attention reads the K/V rows [0, kv_end) of that KvRows, so rows outside
// [lo, hi) come from whatever an earlier pass left there (a cache). The rows of all sequences
// are packed into one matrix for every projection and FFN matmul (the weights are read once per
// layer for the whole batch); attention runs per sequence. Per row the arithmetic is that of
// Model::forward, so a sequence computed with lo = 0, hi = kv_end = T gives bit-identical logits,
// alone or in any batch (tests/engine/cache_test.cpp).
// Thread-safety: one forward_batch call at a time per BatchState and per pool.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dloop/base/status.h"
#include "dloop/engine/model.h"

namespace dloop::engine {

// Keys and values of canvas positions [0, capacity) for every layer of one sequence.
class KvRows {
 public:
  KvRows() = default;
  KvRows(const ModelConfig& c, int64_t capacity) { reserve(c, capacity); }

  // Grows to at least `capacity` positions, keeping the rows already stored.
  void reserve(const ModelConfig& c, int64_t capacity);
  int64_t capacity() const { return capacity_; }
  int64_t kv_dim() const { return kv_dim_; }
  float* k(int64_t layer) { return k_.data() + static_cast<size_t>(layer * capacity_ * kv_dim_); }
  float* v(int64_t layer) { return v_.data() + static_cast<size_t>(layer * capacity_ * kv_dim_); }
  const float* k(int64_t layer) const { return k_.data() + static_cast<size_t>(layer * capacity_ * kv_dim_); }
  const float* v(int64_t layer) const { return v_.data() + static_cast<size_t>(layer * capacity_ * kv_dim_); }
  // Copies rows [0, n) of every layer from `src` (n <= both capacities).
  void copy_rows_from(const KvRows& src, int64_t n);
  size_t bytes() const { return (k_.size() + v_.size()) * sizeof(float); }

 private:
  int64_t n_layer_ = 0;
  int64_t kv_dim_ = 0;
  int64_t capacity_ = 0;
  std::vector<float> k_;  // [n_layer][capacity x n_head_kv*head_dim] f32, after RoPE
  std::vector<float> v_;  // [n_layer][capacity x n_head_kv*head_dim] f32
};

// One sequence of a batched pass.
struct SequencePass {
  std::span<const int32_t> canvas;  // the whole canvas (only [lo, hi) is read)
  int64_t lo = 0;                   // first canvas row computed
  int64_t hi = 0;                   // one past the last; lo < hi <= canvas.size()
  int64_t kv_end = 0;               // attention sees K/V rows [0, kv_end); hi <= kv_end
  KvRows* kv = nullptr;             // capacity >= kv_end; rows outside [lo, hi) must be valid
  std::span<const int32_t> rows;    // canvas rows whose logits are wanted, each in [lo, hi)
  float* logits = nullptr;          // [rows.size() x n_vocab]
  base::Status status;              // set by forward_batch: this sequence's error, if any
};

// Packed activations of a batched pass (grown on demand, reused between calls).
struct BatchState {
  int64_t capacity = 0;
  std::vector<float> x, xn, q, k, v, attn, proj, gate, up;  // [N x dim] as in ForwardState
  std::vector<float> rows;      // [R x n_embd] final hidden rows whose logits are wanted
  std::vector<float> logits;    // [R x n_vocab]
  std::vector<int32_t> positions;  // [N] canvas position of each packed row
};

// Runs the passes together. A pass whose arguments are invalid (token outside the vocabulary,
// rows outside [lo, hi), bad ranges) gets its own status and is left out; the others still run.
// The returned status is the first pass error, for callers with one pass.
base::Status forward_batch(const Model& model, kernels::ThreadPool& pool, std::span<SequencePass> passes,
                           BatchState& state);

}  // namespace dloop::engine
