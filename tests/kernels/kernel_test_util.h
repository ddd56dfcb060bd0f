// Helpers for the kernel tests: random data, random weight matrices of every type, the list of
// ISAs this machine can run, and tolerance checks. Header-only; not thread-safe (shared RNG use).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dloop/kernels/dtype.h"
#include "dloop/kernels/matmul.h"
#include "isa.h"

namespace dloop::kernels::testing {

inline std::vector<float> random_floats(std::mt19937& rng, int64_t n, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = dist(rng);
  return v;
}

// Every ISA compiled in and supported by this CPU, narrowest first.
inline std::vector<cpu::Isa> runnable_isas() {
  std::vector<cpu::Isa> out;
  for (cpu::Isa isa : {cpu::Isa::kScalar, cpu::Isa::kAvx2, cpu::Isa::kAvx512})
    if (static_cast<int>(isa) <= static_cast<int>(cpu::detected_isa())) out.push_back(isa);
  return out;
}

// Sets the active ISA for the lifetime of the object, restoring the detected one afterwards.
class ScopedIsa {
 public:
  explicit ScopedIsa(cpu::Isa isa) { cpu::set_active_isa(isa); }
  ~ScopedIsa() { cpu::set_active_isa(cpu::detected_isa()); }
  ScopedIsa(const ScopedIsa&) = delete;
  ScopedIsa& operator=(const ScopedIsa&) = delete;
};

inline const std::vector<DType>& all_types() {
  static const std::vector<DType> types = {DType::kF32,  DType::kF16,  DType::kBF16, DType::kQ8_0,
                                           DType::kQ4_0, DType::kQ4_K, DType::kQ6_K};
  return types;
}

inline void put_f16(uint8_t* p, float v) {
  const uint16_t h = f32_to_f16(v);
  std::memcpy(p, &h, 2);
}

// A weight matrix of `rows` x `cols` of `type` with random contents: floats in [-1, 1] for the
// float types; random quants with positive f16 scales for the block types.
inline std::vector<uint8_t> random_weights(std::mt19937& rng, DType type, int64_t rows,
                                           int64_t cols) {
  const int64_t rb = row_bytes(type, cols);
  std::vector<uint8_t> out(static_cast<size_t>(rb * rows));
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.01f, 0.1f);
  const std::vector<float> vals = random_floats(rng, rows * cols);
  const int64_t n = rows * cols;
  switch (type) {
    case DType::kF32:
      std::memcpy(out.data(), vals.data(), out.size());
      break;
    case DType::kF16:
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = type == DType::kF16 ? f32_to_f16(vals[i]) : f32_to_bf16(vals[i]);
        std::memcpy(out.data() + 2 * i, &h, 2);
      }
      break;
    default: {
      for (uint8_t& b : out) b = static_cast<uint8_t>(byte(rng));
      const DTypeInfo info = dtype_info(type);
      for (int64_t blk = 0; blk < n / info.block_elems; ++blk) {
        uint8_t* p = out.data() + blk * info.block_bytes;
        if (type == DType::kQ6_K) {
          put_f16(p + 208, scale(rng) * 0.1f);
        } else {
          put_f16(p, scale(rng));
          if (type == DType::kQ4_K) put_f16(p + 2, scale(rng));
        }
      }
    }
  }
  return out;
}

// |got - want| <= tol * scale for every element, reporting the first failure with its index.
inline void expect_close(const float* got, const float* want, int64_t n, double tol,
                         double scale, const std::string& what) {
  for (int64_t i = 0; i < n; ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(err <= tol * scale)) {
      ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " want " << want[i]
                    << " (err " << err << " > " << tol << " * " << scale << ")";
      return;
    }
  }
}

inline double l2_norm(const float* v, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(v[i]) * v[i];
  return std::sqrt(s);
}

}  // namespace dloop::kernels::testing
