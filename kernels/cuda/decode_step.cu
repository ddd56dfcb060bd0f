// The decoding step on the device: for each logits row (a masked canvas position), the chosen
// token (argmax, or float64 Gumbel-max when sampling), its softmax probability, the margin between
// the two most likely tokens and the entropy, so that 16 bytes per position cross to the host
// instead of a vocabulary of logits. One block per row: a first sweep finds the best two logits
// (ties go to the lower token id, as the CPU decoder's order) and, when sampling, the best Gumbel
// score, whose uniforms come by counter from the decoder's SplitMix64 state; a second sweep sums
// exp(x - max) and exp(x - max) * (x - max) in double:
//   p(token) = exp(x_token - max) / S, margin = (1 - exp(x2 - max)) / S, entropy = ln S - A / S.
// Thread-safety: see kernels.h.
#include <cmath>

#include "common.cuh"
#include "dloop/kernels/cuda/kernels.h"

namespace dloop::kernels::cuda {
namespace {

struct Top2 {
  float v1, v2;
  int32_t i1, i2;  // -1: none
};

__device__ bool better(float va, int32_t ia, float vb, int32_t ib) {
  if (ib < 0) return ia >= 0;
  if (ia < 0) return false;
  return va > vb || (va == vb && ia < ib);
}

__device__ void offer(Top2& t, float v, int32_t i) {
  if (better(v, i, t.v1, t.i1)) {
    t.v2 = t.v1;
    t.i2 = t.i1;
    t.v1 = v;
    t.i1 = i;
  } else if (better(v, i, t.v2, t.i2)) {
    t.v2 = v;
    t.i2 = i;
  }
}

struct Best {
  double score;
  int32_t id;  // -1: none
};

__device__ bool better(const Best& a, const Best& b) {
  if (b.id < 0) return a.id >= 0;
  if (a.id < 0) return false;
  return a.score > b.score || (a.score == b.score && a.id < b.id);
}

// The k-th draw (k >= 1) of SplitMix64 from `state`, as a float64 in [0, 1) (rng.h).
__device__ double splitmix_uniform(uint64_t state, uint64_t k) {
  uint64_t z = state + k * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

__global__ void choose_kernel(const float* logits, int64_t n_vocab, ChoiceParams params, TokenChoice* out) {
  __shared__ Top2 tops[detail::kThreads];
  __shared__ Best bests[detail::kThreads];
  const float* x = logits + static_cast<int64_t>(blockIdx.x) * n_vocab;
  const bool sample = params.temperature > 0;
  const uint64_t first = static_cast<uint64_t>(blockIdx.x) * static_cast<uint64_t>(params.draws_per_row);
  Top2 t{-INFINITY, -INFINITY, -1, -1};
  Best g{-INFINITY, -1};
  for (int64_t i = threadIdx.x; i < n_vocab; i += blockDim.x) {
    if (i == params.exclude || isnan(x[i])) continue;
    offer(t, x[i], static_cast<int32_t>(i));
    if (sample && x[i] != -INFINITY) {
      double u = splitmix_uniform(params.rng_state, first + static_cast<uint64_t>(i) + 1);
      if (u == 0.0) u = 0x1.0p-53;
      const Best c{static_cast<double>(x[i]) / params.temperature - log(-log(u)), static_cast<int32_t>(i)};
      if (better(c, g)) g = c;
    }
  }
  tops[threadIdx.x] = t;
  bests[threadIdx.x] = g;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (static_cast<int>(threadIdx.x) < stride) {
      Top2 a = tops[threadIdx.x];
      const Top2 b = tops[threadIdx.x + stride];
      if (b.i1 >= 0) offer(a, b.v1, b.i1);
      if (b.i2 >= 0) offer(a, b.v2, b.i2);
      tops[threadIdx.x] = a;
      if (better(bests[threadIdx.x + stride], bests[threadIdx.x])) bests[threadIdx.x] = bests[threadIdx.x + stride];
    }
    __syncthreads();
  }
  const Top2 best = tops[0];
  if (best.i1 < 0 || !isfinite(best.v1)) {  // nothing to choose (all excluded, NaN or -inf)
    if (threadIdx.x == 0) out[blockIdx.x] = TokenChoice{-1, 0.0f, 0.0f, 0.0f};
    return;
  }
  const int32_t chosen = sample && bests[0].id >= 0 ? bests[0].id : best.i1;
  const double mx = best.v1;
  double s = 0, a = 0;
  for (int64_t i = threadIdx.x; i < n_vocab; i += blockDim.x) {
    if (i == params.exclude || isnan(x[i])) continue;
    const double d = static_cast<double>(x[i]) - mx;
    const double e = exp(d);
    s += e;
    if (e > 0) a += e * d;
  }
  s = detail::block_sum(s);
  a = detail::block_sum(a);
  if (threadIdx.x == 0) {
    const double p2 = best.i2 >= 0 ? exp(static_cast<double>(best.v2) - mx) / s : 0.0;
    const double p = exp(static_cast<double>(x[chosen]) - mx) / s;
    out[blockIdx.x] = TokenChoice{chosen, static_cast<float>(p), static_cast<float>(1.0 / s - p2),
                                  static_cast<float>(log(s) - a / s)};
  }
}

}  // namespace

base::Status choose_tokens(const float* logits, int64_t n_rows, int64_t n_vocab, const ChoiceParams& params,
                           TokenChoice* out, cudaStream_t stream) {
  if (n_rows < 0 || n_rows > 0x7fffffff) return detail::bad_shape("choose_tokens", "n_rows", n_rows);
  if (n_vocab <= 0 || n_vocab > 0x7fffffff) return detail::bad_shape("choose_tokens", "n_vocab", n_vocab);
  if (params.temperature < 0 || !std::isfinite(params.temperature)) {
    return base::invalid_argument("choose_tokens: temperature must be finite and >= 0");
  }
  if (params.temperature > 0 && params.draws_per_row < n_vocab) {
    return detail::bad_shape("choose_tokens", "draws_per_row (under n_vocab)", params.draws_per_row);
  }
  if (n_rows == 0) return base::Status();
  choose_kernel<<<static_cast<unsigned>(n_rows), detail::kThreads, 0, stream>>>(logits, n_vocab, params, out);
  return launch_status("choose_kernel");
}

}  // namespace dloop::kernels::cuda
