// Bidirectional (unmasked) multi-head softmax attention with grouped-query heads, as diffusion
// LMs use it: every query position sees every key position. Computed per head and per block of
// 16-32 queries with an exact two-pass softmax over that block's [n_kv x block] scores, so no
// [n_q x n_kv] score matrix is materialized. Results do not depend on the pool size.
// Thread-safety: as matmul (one call at a time per pool).
#pragma once

#include <cstdint>

#include "dloop/kernels/thread_pool.h"

namespace dloop::kernels {

struct AttentionShape {
  int64_t n_q;        // query positions
  int64_t n_kv;       // key/value positions, >= 1
  int64_t n_head;     // query heads, a multiple of n_head_kv
  int64_t n_head_kv;  // key/value heads
  int64_t head_dim;   // elements per head
  float scale;        // logits = scale * q.k, usually 1/sqrt(head_dim)
};

// q [n_q x n_head*head_dim], k and v [n_kv x n_head_kv*head_dim], out [n_q x n_head*head_dim], all
// row-major f32. Query head h uses kv head h / (n_head / n_head_kv). Softmax in f32. out is
// overwritten and must not overlap the inputs.
void attention_f32(ThreadPool& pool, const AttentionShape& s, const float* q, const float* k,
                   const float* v, float* out);

}  // namespace dloop::kernels
