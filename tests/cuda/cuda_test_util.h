// Helpers of the gpu-labelled tests: skip without a device, device buffers, random data and the
// tolerance check. A tolerance is relative to the largest magnitude of the expected values:
// max |got - want| <= tol * max |want| (so values near zero do not inflate the error).
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "dloop/kernels/cuda/kernels.h"

namespace dloop::kernels::cuda::test {

#define DLOOP_SKIP_WITHOUT_GPU()                                          \
  do {                                                                    \
    if (::dloop::kernels::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

#define ASSERT_CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call
#define ASSERT_STATUS_OK(expr)                      \
  do {                                              \
    const auto dloop_s_ = (expr);                   \
    ASSERT_TRUE(dloop_s_.ok()) << dloop_s_.to_string(); \
  } while (0)

// A device copy of a host vector; download() brings it back.
template <typename T>
class DeviceVec {
 public:
  explicit DeviceVec(size_t n) : n_(n) { EXPECT_EQ(cudaMalloc(&p_, std::max<size_t>(n, 1) * sizeof(T)), cudaSuccess); }
  explicit DeviceVec(const std::vector<T>& h) : DeviceVec(h.size()) {
    EXPECT_EQ(cudaMemcpy(p_, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceVec() { cudaFree(p_); }
  DeviceVec(const DeviceVec&) = delete;
  DeviceVec& operator=(const DeviceVec&) = delete;
  T* get() { return static_cast<T*>(p_); }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }

 private:
  void* p_ = nullptr;
  size_t n_;
};

inline std::vector<float> random_floats(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

inline double max_rel_error(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::fabs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
  }
  return scale > 0 ? err / scale : err;
}

#define EXPECT_CLOSE(got, want, tol)                                           \
  do {                                                                         \
    ASSERT_EQ((got).size(), (want).size());                                    \
    const double dloop_e_ = ::dloop::kernels::cuda::test::max_rel_error(got, want); \
    EXPECT_LE(dloop_e_, (tol)) << "relative error " << dloop_e_;               \
  } while (0)

}  // namespace dloop::kernels::cuda::test
