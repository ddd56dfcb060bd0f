// Rotary position embedding on the device, both pair layouts (NORM: adjacent pairs, LLaDA; NEOX:
// (i, i + head_dim/2), Dream). One thread per rotated pair; the angle and its cos/sin in double
// as in kernels::ref::rope_f32_ref. Thread-safety: see kernels.h.
#include "common.cuh"
#include "dloop/kernels/cuda/kernels.h"

namespace dloop::kernels::cuda {
namespace {

__global__ void rope_kernel(float* x, int64_t n_pairs, int64_t n_heads, int64_t head_dim, const int32_t* positions,
                            double theta, bool neox) {
  const int64_t half = head_dim / 2;
  for (int64_t p = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; p < n_pairs;
       p += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = p % half;
    const int64_t th = p / half;  // token * n_heads + head
    const int64_t t = th / n_heads;
    float* xh = x + th * head_dim;
    const double freq = pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
    const double angle = static_cast<double>(positions[t]) * freq;
    double s = 0, c = 0;
    sincos(angle, &s, &c);
    const int64_t i0 = neox ? i : 2 * i;
    const int64_t i1 = neox ? i + half : 2 * i + 1;
    const double x0 = xh[i0], x1 = xh[i1];
    xh[i0] = static_cast<float>(x0 * c - x1 * s);
    xh[i1] = static_cast<float>(x0 * s + x1 * c);
  }
}

}  // namespace

base::Status rope_f32(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim, const int32_t* positions,
                      float theta, RopeType type, cudaStream_t stream) {
  if (head_dim <= 0 || head_dim % 2 != 0) return detail::bad_shape("rope_f32", "head_dim (must be even)", head_dim);
  if (n_tokens < 0) return detail::bad_shape("rope_f32", "n_tokens", n_tokens);
  if (n_heads <= 0) return detail::bad_shape("rope_f32", "n_heads", n_heads);
  const int64_t n_pairs = n_tokens * n_heads * (head_dim / 2);
  if (n_pairs == 0) return base::Status();
  rope_kernel<<<detail::grid_for(n_pairs), detail::kThreads, 0, stream>>>(
      x, n_pairs, n_heads, head_dim, positions, static_cast<double>(theta), type == RopeType::kNeox);
  return launch_status("rope_kernel");
}

}  // namespace dloop::kernels::cuda
