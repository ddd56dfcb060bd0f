// Internal: a grow-only, 64-byte aligned float scratch buffer. Kernels keep one per thread
// (thread_local) so steady-state calls allocate nothing. Not thread-safe; one owner.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "dloop/base/assert.h"

namespace dloop::kernels::cpu {

class ScratchBuffer {
 public:
  // A buffer of at least n floats (contents unspecified; zeroed when first allocated).
  float* get(int64_t n) {
    if (n > capacity_) {
      // Grow geometrically, rounded up to whole cache lines.
      int64_t want = n > capacity_ * 3 / 2 ? n : capacity_ * 3 / 2;
      want = (want + 15) / 16 * 16;
      void* p = std::aligned_alloc(64, static_cast<size_t>(want) * sizeof(float));
      DLOOP_ASSERT_MSG(p != nullptr, "kernel scratch allocation failed");
      data_.reset(static_cast<float*>(p));
      for (int64_t i = 0; i < want; ++i) data_.get()[i] = 0.0f;
      capacity_ = want;
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data_;
  int64_t capacity_ = 0;
};

}  // namespace dloop::kernels::cpu
