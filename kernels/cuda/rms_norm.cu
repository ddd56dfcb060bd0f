// RMSNorm on the device: one block per row, the sum of squares in double as in
// kernels::ref::rms_norm_f32_ref, so results match the reference to f32 rounding.
// Thread-safety: see kernels.h.
#include "common.cuh"
#include "dloop/kernels/cuda/kernels.h"

namespace dloop::kernels::cuda {
namespace {

__global__ void rms_norm_kernel(const float* x, const int32_t* rows, const float* w, float* y, int64_t dim,
                                float eps) {
  const int64_t r = blockIdx.x;
  const int64_t src = rows != nullptr ? rows[r] : r;
  const float* xr = x + src * dim;
  float* yr = y + r * dim;
  double ss = 0;
  for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) ss += static_cast<double>(xr[j]) * xr[j];
  ss = detail::block_sum(ss);
  const double scale = 1.0 / sqrt(ss / static_cast<double>(dim) + static_cast<double>(eps));
  for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) {
    yr[j] = static_cast<float>(static_cast<double>(xr[j]) * scale * static_cast<double>(w[j]));
  }
}

base::Status launch(const float* x, const int32_t* rows, int64_t n_rows, const float* w, float* y, int64_t dim,
                    float eps, cudaStream_t stream) {
  if (n_rows < 0 || n_rows > 0x7fffffff) return detail::bad_shape("rms_norm_f32", "n_rows", n_rows);
  if (dim <= 0) return detail::bad_shape("rms_norm_f32", "dim", dim);
  if (n_rows == 0) return base::Status();
  rms_norm_kernel<<<static_cast<unsigned>(n_rows), detail::kThreads, 0, stream>>>(x, rows, w, y, dim, eps);
  return launch_status("rms_norm_kernel");
}

}  // namespace

base::Status rms_norm_f32(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim, float eps,
                          cudaStream_t stream) {
  return launch(x, nullptr, n_rows, weight, y, dim, eps, stream);
}

base::Status rms_norm_rows_f32(const float* x, const int32_t* rows, int64_t n_rows, const float* weight, float* y,
                               int64_t dim, float eps, cudaStream_t stream) {
  return launch(x, rows, n_rows, weight, y, dim, eps, stream);
}

}  // namespace dloop::kernels::cuda
