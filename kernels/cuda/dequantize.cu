// Dequantization on the device, used once at load: ggml blocks (Q8_0, Q4_0, Q4_K, Q6_K) and
// plain F32/F16/BF16 rows into a dense f32, f16 or bf16 matrix. One thread per output element
// decodes it with dequant_element (dequant_element.h, shared with the host unit test). This file
// is compiled with -fmad=false so the f32 values are ggml's bit for bit before the final rounding.
// Thread-safety: see kernels.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.cuh"
#include "dloop/kernels/cuda/dequant_element.h"
#include "dloop/kernels/cuda/kernels.h"

namespace dloop::kernels::cuda {
namespace {

template <typename Out>
__device__ Out from_f32(float v);
template <>
__device__ float from_f32<float>(float v) { return v; }
template <>
__device__ __half from_f32<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

template <typename Out>
__global__ void dequantize_kernel(uint32_t type, const uint8_t* src, int64_t row_bytes, int64_t rows, int64_t cols,
                                  Out* dst) {
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / cols, c = i % cols;
    dst[i] = from_f32<Out>(dequant_row_element(type, src + r * row_bytes, c));
  }
}

}  // namespace

base::Status dequantize(uint32_t ggml_type, const void* src, int64_t rows, int64_t cols, void* dst,
                        StoreType dst_type, cudaStream_t stream) {
  const int be = block_elems(ggml_type);
  if (be == 0) return detail::bad_shape("dequantize", "unsupported ggml type", ggml_type);
  if (rows < 0) return detail::bad_shape("dequantize", "rows", rows);
  if (cols <= 0 || cols % be != 0) return detail::bad_shape("dequantize", "cols (not a multiple of the block size)", cols);
  const int64_t n = rows * cols;
  if (n == 0) return base::Status();
  const int64_t rb = cols / be * block_bytes(ggml_type);
  const auto* s = static_cast<const uint8_t*>(src);
  switch (dst_type) {
    case StoreType::kF32:
      dequantize_kernel<<<detail::grid_for(n), detail::kThreads, 0, stream>>>(ggml_type, s, rb, rows, cols,
                                                                              static_cast<float*>(dst));
      break;
    case StoreType::kF16:
      dequantize_kernel<<<detail::grid_for(n), detail::kThreads, 0, stream>>>(ggml_type, s, rb, rows, cols,
                                                                              static_cast<__half*>(dst));
      break;
    case StoreType::kBF16:
      dequantize_kernel<<<detail::grid_for(n), detail::kThreads, 0, stream>>>(ggml_type, s, rb, rows, cols,
                                                                              static_cast<__nv_bfloat16*>(dst));
      break;
  }
  return launch_status("dequantize_kernel");
}

}  // namespace dloop::kernels::cuda
