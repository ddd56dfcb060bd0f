// The decoding step on the device: for each logits row (a masked canvas position), the argmax
// token, its softmax probability, the margin to the runner-up and the entropy, so that 16 bytes
// per position cross to the host instead of a vocabulary of logits. One block per row: a first
// sweep finds the best two logits (ties go to the lower token id, as the CPU decoder's order),
// a second sums exp(x - max) and exp(x - max) * (x - max) in double:
//   confidence = 1 / S, margin = (1 - exp(x2 - max)) / S, entropy = ln S - A / S.
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

__global__ void choose_kernel(const float* logits, int64_t n_vocab, int32_t exclude, TokenChoice* out) {
  __shared__ Top2 tops[detail::kThreads];
  const float* x = logits + static_cast<int64_t>(blockIdx.x) * n_vocab;
  Top2 t{-INFINITY, -INFINITY, -1, -1};
  for (int64_t i = threadIdx.x; i < n_vocab; i += blockDim.x) {
    if (i == exclude || isnan(x[i])) continue;
    offer(t, x[i], static_cast<int32_t>(i));
  }
  tops[threadIdx.x] = t;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (static_cast<int>(threadIdx.x) < stride) {
      Top2 a = tops[threadIdx.x];
      const Top2 b = tops[threadIdx.x + stride];
      if (b.i1 >= 0) offer(a, b.v1, b.i1);
      if (b.i2 >= 0) offer(a, b.v2, b.i2);
      tops[threadIdx.x] = a;
    }
    __syncthreads();
  }
  const Top2 best = tops[0];
  if (best.i1 < 0 || !isfinite(best.v1)) {  // nothing to choose (all excluded, NaN or -inf)
    if (threadIdx.x == 0) out[blockIdx.x] = TokenChoice{-1, 0.0f, 0.0f, 0.0f};
    return;
  }
  const double mx = best.v1;
  double s = 0, a = 0;
  for (int64_t i = threadIdx.x; i < n_vocab; i += blockDim.x) {
    if (i == exclude || isnan(x[i])) continue;
    const double d = static_cast<double>(x[i]) - mx;
    const double e = exp(d);
    s += e;
    if (e > 0) a += e * d;
  }
  s = detail::block_sum(s);
  a = detail::block_sum(a);
  if (threadIdx.x == 0) {
    const double p2 = best.i2 >= 0 ? exp(static_cast<double>(best.v2) - mx) / s : 0.0;
    out[blockIdx.x] = TokenChoice{best.i1, static_cast<float>(1.0 / s), static_cast<float>(1.0 / s - p2),
                                  static_cast<float>(log(s) - a / s)};
  }
}

}  // namespace

base::Status choose_tokens(const float* logits, int64_t n_rows, int64_t n_vocab, int32_t exclude,
                           TokenChoice* out, cudaStream_t stream) {
  if (n_rows < 0 || n_rows > 0x7fffffff) return detail::bad_shape("choose_tokens", "n_rows", n_rows);
  if (n_vocab <= 0 || n_vocab > 0x7fffffff) return detail::bad_shape("choose_tokens", "n_vocab", n_vocab);
  if (n_rows == 0) return base::Status();
  choose_kernel<<<static_cast<unsigned>(n_rows), detail::kThreads, 0, stream>>>(logits, n_vocab, exclude, out);
  return launch_status("choose_kernel");
}

}  // namespace dloop::kernels::cuda
