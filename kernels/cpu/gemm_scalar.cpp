// The portable GEMM building blocks (see isa.h for the packed layouts): a 4x16 tile in plain
// C++, used on CPUs without AVX2 and as one more backend the tests compare. Pure; thread-safe.
#include <algorithm>

#include "isa_impl.h"

namespace dloop::kernels::cpu::scalar {

void pack_a(const float* a, int64_t lda, int64_t m, int64_t k, float* dst) {
  for (int64_t r0 = 0; r0 < m; r0 += kMr) {
    float* panel = dst + r0 * k;
    for (int64_t c = 0; c < k; ++c)
      for (int64_t i = 0; i < kMr; ++i) panel[c * kMr + i] = r0 + i < m ? a[(r0 + i) * lda + c] : 0.0f;
  }
}

void pack_b(DType type, const void* w, int64_t w_row_bytes, int64_t n, int64_t k, float* dst) {
  constexpr int64_t kChunk = 256;
  float tmp[kChunk];
  const auto* base = static_cast<const uint8_t*>(w);
  for (int64_t k0 = 0; k0 < k; k0 += kChunk) {
    const int64_t kc = std::min(kChunk, k - k0);
    for (int64_t r = 0; r < kNr; ++r) {
      if (r < n) scalar::dequantize_row(type, base + r * w_row_bytes + row_bytes(type, k0), tmp, kc);
      for (int64_t c = 0; c < kc; ++c) dst[(k0 + c) * kNr + r] = r < n ? tmp[c] : 0.0f;
    }
  }
}

void gemm_panel(int64_t m, int64_t n_valid, int64_t k, const float* a_panels,
                const float* b_panel, float* c, int64_t ldc, bool accumulate,
                const PrefetchRows& /*next: a hint this backend ignores*/) {
  for (int64_t r0 = 0; r0 < m; r0 += kMr) {
    const float* a = a_panels + r0 * k;
    float acc[kMr][kNr] = {};
    for (int64_t p = 0; p < k; ++p)
      for (int64_t i = 0; i < kMr; ++i)
        for (int64_t j = 0; j < kNr; ++j) acc[i][j] += a[p * kMr + i] * b_panel[p * kNr + j];
    for (int64_t i = 0; i < kMr && r0 + i < m; ++i)
      for (int64_t j = 0; j < n_valid; ++j)
        c[(r0 + i) * ldc + j] = accumulate ? c[(r0 + i) * ldc + j] + acc[i][j] : acc[i][j];
  }
}

}  // namespace dloop::kernels::cpu::scalar
