// Element-wise kernels on the device: SwiGLU, residual add, bias add, f32 -> f16/bf16 conversion
// and the embedding-row gather. Grid-stride loops over int64 indices. Thread-safety: see kernels.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.cuh"
#include "dloop/kernels/cuda/kernels.h"

namespace dloop::kernels::cuda {
namespace {

#define DLOOP_GRID_STRIDE(i, n)                                                              \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// In f32 (expf, not the fast __expf): within a few ulp of the double reference, and cheap on GPUs
// whose double rate is 1/64 of f32 (sm_89).
__global__ void swiglu_kernel(const float* gate, const float* up, float* out, int64_t n) {
  DLOOP_GRID_STRIDE(i, n) {
    const float g = gate[i];
    out[i] = g / (1.0f + expf(-g)) * up[i];
  }
}

__global__ void add_kernel(float* y, const float* x, int64_t n) {
  DLOOP_GRID_STRIDE(i, n) { y[i] += x[i]; }
}

__global__ void add_bias_kernel(float* y, const float* bias, int64_t n, int64_t dim) {
  DLOOP_GRID_STRIDE(i, n) { y[i] += bias[i % dim]; }
}

__global__ void convert_f16_kernel(const float* x, __half* y, int64_t n) {
  DLOOP_GRID_STRIDE(i, n) { y[i] = __float2half_rn(x[i]); }
}

__global__ void convert_bf16_kernel(const float* x, __nv_bfloat16* y, int64_t n) {
  DLOOP_GRID_STRIDE(i, n) { y[i] = __float2bfloat16_rn(x[i]); }
}

__global__ void embed_kernel(const void* table, int type, int64_t n_vocab, int64_t dim, const int32_t* tokens,
                             int64_t n, float* x) {
  DLOOP_GRID_STRIDE(i, n) {
    const int64_t t = i / dim, j = i % dim;
    const int64_t id = tokens[t];
    float v = 0.0f;
    if (id >= 0 && id < n_vocab) {
      const int64_t at = id * dim + j;
      if (type == 0) v = static_cast<const float*>(table)[at];
      else if (type == 1) v = __half2float(static_cast<const __half*>(table)[at]);
      else v = __bfloat162float(static_cast<const __nv_bfloat16*>(table)[at]);
    }
    x[i] = v;
  }
}

}  // namespace

const char* store_type_name(StoreType t) {
  switch (t) {
    case StoreType::kF32: return "f32";
    case StoreType::kF16: return "f16";
    case StoreType::kBF16: return "bf16";
  }
  return "?";
}

int store_type_bytes(StoreType t) { return t == StoreType::kF32 ? 4 : 2; }

base::Status swiglu_f32(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream) {
  if (n < 0) return detail::bad_shape("swiglu_f32", "n", n);
  if (n == 0) return base::Status();
  swiglu_kernel<<<detail::grid_for(n), detail::kThreads, 0, stream>>>(gate, up, out, n);
  return launch_status("swiglu_kernel");
}

base::Status add_f32(float* y, const float* x, int64_t n, cudaStream_t stream) {
  if (n < 0) return detail::bad_shape("add_f32", "n", n);
  if (n == 0) return base::Status();
  add_kernel<<<detail::grid_for(n), detail::kThreads, 0, stream>>>(y, x, n);
  return launch_status("add_kernel");
}

base::Status add_bias_f32(float* y, const float* bias, int64_t n_rows, int64_t dim, cudaStream_t stream) {
  if (n_rows < 0) return detail::bad_shape("add_bias_f32", "n_rows", n_rows);
  if (dim <= 0) return detail::bad_shape("add_bias_f32", "dim", dim);
  const int64_t n = n_rows * dim;
  if (n == 0) return base::Status();
  add_bias_kernel<<<detail::grid_for(n), detail::kThreads, 0, stream>>>(y, bias, n, dim);
  return launch_status("add_bias_kernel");
}

base::Status convert_f32(const float* x, void* y, int64_t n, StoreType type, cudaStream_t stream) {
  if (n < 0) return detail::bad_shape("convert_f32", "n", n);
  if (n == 0) return base::Status();
  switch (type) {
    case StoreType::kF32:
      DLOOP_CUDA_RETURN(cudaMemcpyAsync(y, x, static_cast<size_t>(n) * sizeof(float), cudaMemcpyDeviceToDevice, stream));
      return base::Status();
    case StoreType::kF16:
      convert_f16_kernel<<<detail::grid_for(n), detail::kThreads, 0, stream>>>(x, static_cast<__half*>(y), n);
      return launch_status("convert_f16_kernel");
    case StoreType::kBF16:
      convert_bf16_kernel<<<detail::grid_for(n), detail::kThreads, 0, stream>>>(x, static_cast<__nv_bfloat16*>(y), n);
      return launch_status("convert_bf16_kernel");
  }
  return base::invalid_argument("convert_f32: unknown store type");
}

base::Status embed_rows(const void* table, StoreType type, int64_t n_vocab, int64_t dim, const int32_t* tokens,
                        int64_t n_tokens, float* x, cudaStream_t stream) {
  if (dim <= 0) return detail::bad_shape("embed_rows", "dim", dim);
  if (n_tokens < 0) return detail::bad_shape("embed_rows", "n_tokens", n_tokens);
  const int64_t n = n_tokens * dim;
  if (n == 0) return base::Status();
  const int t = type == StoreType::kF32 ? 0 : (type == StoreType::kF16 ? 1 : 2);
  embed_kernel<<<detail::grid_for(n), detail::kThreads, 0, stream>>>(table, t, n_vocab, dim, tokens, n, x);
  return launch_status("embed_kernel");
}

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device / no driver" error
    return 0;
  }
  return n;
}

}  // namespace dloop::kernels::cuda
