// CUDA runtime and cuBLAS error checks that return base::Status values naming the failed call, for
// the CUDA backend (kernels/cuda, engine/cuda). Only targets that link dloop_cuda_kernels see this
// header; runtime/ never includes it. Pure functions; thread-safe.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

#include "dloop/base/status.h"

namespace dloop::kernels::cuda {

// "CUDA: cudaMalloc(&p, n): cudaErrorMemoryAllocation (out of memory)".
inline base::Status cuda_status(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return base::Status();
  return base::internal_error(std::string("CUDA: ")
                                  .append(call)
                                  .append(": ")
                                  .append(cudaGetErrorName(e))
                                  .append(" (")
                                  .append(cudaGetErrorString(e))
                                  .append(")"));
}

inline base::Status cublas_status(cublasStatus_t e, const char* call) {
  if (e == CUBLAS_STATUS_SUCCESS) return base::Status();
  return base::internal_error(std::string("cuBLAS: ").append(call).append(": ").append(cublasGetStatusName(e)));
}

// After a kernel launch: reports a bad launch (configuration, missing code for this GPU) at once;
// errors while the kernel runs surface at the next synchronizing call, which is checked too.
inline base::Status launch_status(const char* kernel) {
  return cuda_status(cudaGetLastError(), kernel);
}

}  // namespace dloop::kernels::cuda

#define DLOOP_CUDA_RETURN(call)                                                     \
  do {                                                                              \
    const cudaError_t dloop_cuda_err_ = (call);                                     \
    if (dloop_cuda_err_ != cudaSuccess)                                             \
      return ::dloop::kernels::cuda::cuda_status(dloop_cuda_err_, #call);           \
  } while (0)

#define DLOOP_CUBLAS_RETURN(call)                                                   \
  do {                                                                              \
    const cublasStatus_t dloop_cublas_err_ = (call);                                \
    if (dloop_cublas_err_ != CUBLAS_STATUS_SUCCESS)                                 \
      return ::dloop::kernels::cuda::cublas_status(dloop_cublas_err_, #call);       \
  } while (0)
