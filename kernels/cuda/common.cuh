// Internal helpers of the CUDA kernels: launch sizes, shape checks and block reductions.
// Header-only; included by kernels/cuda/*.cu only. Thread-safe (no state).
#pragma once

#include <cstdint>
#include <string>

#include "dloop/base/status.h"
#include "dloop/kernels/cuda/check.h"

namespace dloop::kernels::cuda::detail {

constexpr int kThreads = 256;

// Blocks for an element-wise grid-stride kernel over n elements (capped; the loop covers the rest).
inline unsigned grid_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
}

inline base::Status bad_shape(const char* kernel, const char* what, int64_t value) {
  return base::invalid_argument(std::string(kernel).append(": ").append(what).append(" = ").append(std::to_string(value)));
}

// Sum of v over the block (blockDim.x a multiple of 32, at most 1024); every thread gets it.
template <typename T>
__device__ T block_sum(T v) {
  __shared__ T partial[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // partial may still be read by a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int n_warps = blockDim.x / 32;
  T total = 0;
  for (int w = 0; w < n_warps; ++w) total += partial[w];
  return total;
}

}  // namespace dloop::kernels::cuda::detail
