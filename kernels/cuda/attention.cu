// Bidirectional multi-head attention on the device, flash-style: a block of 4 warps owns
// 4 * kQueriesPerWarp queries of one head; it streams the keys and values through shared memory
// in tiles of 32 rows, and each warp keeps an online softmax (running max, running sum, f32
// accumulators of head_dim / 32 elements per lane) for each of its queries, so no score matrix
// is ever stored. In a tile, lane j scores key j; the probabilities are then broadcast by
// shuffles for the value sum. Long canvases use 4 queries per warp (K/V tiles reused 16 times);
// short query sets (a cached block of 32 rows) use 1 so that enough blocks run.
// Measured slow on an H200 (docs/performance.md, "CUDA backend"): 88% of a pass's GPU time, from
// too few blocks for short query sets and a latency-bound tile copy; the fixes are listed there.
// Thread-safety: see kernels.h.
#include <cmath>

#include "common.cuh"
#include "dloop/kernels/cuda/kernels.h"

namespace dloop::kernels::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kKeyTile = 32;
constexpr int kMaxHeadDim = 128;
constexpr int kDimsPerLane = kMaxHeadDim / 32;

template <int kQueriesPerWarp>
__global__ void attention_kernel(AttentionShape s, const float* q, const float* k, const float* v, float* out) {
  constexpr int kQueries = kWarps * kQueriesPerWarp;
  __shared__ float q_s[kQueries][kMaxHeadDim];
  __shared__ float k_s[kKeyTile][kMaxHeadDim + 1];  // +1: lane j reads row j without bank conflicts
  __shared__ float v_s[kKeyTile][kMaxHeadDim];
  const int hd = static_cast<int>(s.head_dim);
  const int64_t h = blockIdx.y;
  const int64_t hk = h / (s.n_head / s.n_head_kv);
  const int64_t ldq = s.n_head * s.head_dim, ldkv = s.n_head_kv * s.head_dim;
  const int64_t q0 = static_cast<int64_t>(blockIdx.x) * kQueries;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  for (int idx = threadIdx.x; idx < kQueries * kMaxHeadDim; idx += blockDim.x) {
    const int qi = idx / kMaxHeadDim, d = idx % kMaxHeadDim;
    const int64_t row = q0 + qi;
    q_s[qi][d] = (row < s.n_q && d < hd) ? q[row * ldq + h * hd + d] : 0.0f;
  }

  float m[kQueriesPerWarp], l[kQueriesPerWarp], acc[kQueriesPerWarp][kDimsPerLane];
  for (int i = 0; i < kQueriesPerWarp; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.0f;
    for (int r = 0; r < kDimsPerLane; ++r) acc[i][r] = 0.0f;
  }

  for (int64_t kt = 0; kt < s.n_kv; kt += kKeyTile) {
    __syncthreads();  // the previous tile is no longer read (and q_s is written, the first time)
    for (int idx = threadIdx.x; idx < kKeyTile * kMaxHeadDim; idx += blockDim.x) {
      const int j = idx / kMaxHeadDim, d = idx % kMaxHeadDim;
      const int64_t key = kt + j;
      const bool ok = key < s.n_kv && d < hd;
      k_s[j][d] = ok ? k[key * ldkv + hk * hd + d] : 0.0f;
      v_s[j][d] = ok ? v[key * ldkv + hk * hd + d] : 0.0f;
    }
    __syncthreads();
    const bool key_ok = kt + lane < s.n_kv;
    for (int i = 0; i < kQueriesPerWarp; ++i) {
      const int qi = warp * kQueriesPerWarp + i;
      if (q0 + qi >= s.n_q) break;  // uniform across the warp
      float score = -INFINITY;
      if (key_ok) {
        float dot = 0.0f;
        for (int d = 0; d < hd; ++d) dot += q_s[qi][d] * k_s[lane][d];
        score = dot * s.scale;
      }
      float tile_max = score;
      for (int o = 16; o > 0; o >>= 1) tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, o));
      const float m_new = fmaxf(m[i], tile_max);  // finite: key kt is always valid
      const float p = key_ok ? expf(score - m_new) : 0.0f;
      const float corr = expf(m[i] - m_new);      // 0 on the first tile (m = -inf)
      float p_sum = p;
      for (int o = 16; o > 0; o >>= 1) p_sum += __shfl_xor_sync(0xffffffffu, p_sum, o);
      l[i] = l[i] * corr + p_sum;
      for (int r = 0; r < kDimsPerLane; ++r) acc[i][r] *= corr;
      for (int j = 0; j < kKeyTile; ++j) {
        const float pj = __shfl_sync(0xffffffffu, p, j);
        for (int r = 0; r < kDimsPerLane; ++r) acc[i][r] += pj * v_s[j][lane + 32 * r];
      }
      m[i] = m_new;
    }
  }
  for (int i = 0; i < kQueriesPerWarp; ++i) {
    const int64_t row = q0 + warp * kQueriesPerWarp + i;
    if (row >= s.n_q) break;
    for (int r = 0; r < kDimsPerLane; ++r) {
      const int d = lane + 32 * r;
      if (d < hd) out[row * ldq + h * hd + d] = acc[i][r] / l[i];
    }
  }
}

}  // namespace

base::Status attention_f32(const AttentionShape& s, const float* q, const float* k, const float* v, float* out,
                           cudaStream_t stream) {
  if (s.head_dim <= 0 || s.head_dim > kMaxHeadDim) {
    return detail::bad_shape("attention_f32", "head_dim (1..128 supported)", s.head_dim);
  }
  if (s.n_head_kv <= 0 || s.n_head <= 0 || s.n_head % s.n_head_kv != 0) {
    return detail::bad_shape("attention_f32", "n_head (must be a multiple of n_head_kv)", s.n_head);
  }
  if (s.n_head > 65535) return detail::bad_shape("attention_f32", "n_head", s.n_head);
  if (s.n_kv < 1) return detail::bad_shape("attention_f32", "n_kv", s.n_kv);
  if (s.n_q < 0) return detail::bad_shape("attention_f32", "n_q", s.n_q);
  if (s.n_q == 0) return base::Status();
  const dim3 threads(kWarps * 32);
  if (s.n_q <= 256) {
    const dim3 grid(static_cast<unsigned>((s.n_q + kWarps - 1) / kWarps), static_cast<unsigned>(s.n_head));
    attention_kernel<1><<<grid, threads, 0, stream>>>(s, q, k, v, out);
  } else {
    const dim3 grid(static_cast<unsigned>((s.n_q + 4 * kWarps - 1) / (4 * kWarps)), static_cast<unsigned>(s.n_head));
    attention_kernel<4><<<grid, threads, 0, stream>>>(s, q, k, v, out);
  }
  return launch_status("attention_kernel");
}

}  // namespace dloop::kernels::cuda
