// rms_norm_f32: y = x / sqrt(mean(x^2) + eps) * weight per row, in scalar, AVX2 and AVX-512
// variants (the scalar one is the reference) and the public entry point that dispatches to the
// active ISA. Pure; thread-safe on disjoint outputs.
#include <cmath>

#include "dloop/base/assert.h"
#include "dloop/kernels/ops.h"
#include "dloop/kernels/reference.h"
#include "isa_impl.h"
#include "vec_math.h"

namespace dloop::kernels {
namespace cpu {

namespace scalar {

void rms_norm_f32(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim,
                  float eps) {
  ref::rms_norm_f32_ref(x, weight, y, n_rows, dim, eps);
}

}  // namespace scalar

#if DLOOP_KERNELS_X86
namespace avx2 {

DLOOP_TARGET_AVX2 void rms_norm_f32(const float* x, const float* weight, float* y, int64_t n_rows,
                                    int64_t dim, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 16 <= dim; j += 16) {
      const __m256 a = _mm256_loadu_ps(xr + j), b = _mm256_loadu_ps(xr + j + 8);
      acc0 = _mm256_fmadd_ps(a, a, acc0);
      acc1 = _mm256_fmadd_ps(b, b, acc1);
    }
    float ss = hsum(_mm256_add_ps(acc0, acc1));
    for (; j < dim; ++j) ss += xr[j] * xr[j];
    const float s = 1.0f / std::sqrt(ss / static_cast<float>(dim) + eps);
    const __m256 vs = _mm256_set1_ps(s);
    for (j = 0; j + 8 <= dim; j += 8)
      _mm256_storeu_ps(yr + j, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(xr + j), vs),
                                             _mm256_loadu_ps(weight + j)));
    for (; j < dim; ++j) yr[j] = xr[j] * s * weight[j];
  }
}

}  // namespace avx2

namespace avx512 {

DLOOP_TARGET_AVX512 void rms_norm_f32(const float* x, const float* weight, float* y,
                                      int64_t n_rows, int64_t dim, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                     _mm512_setzero_ps()};
    int64_t j = 0;
    for (; j + 64 <= dim; j += 64) {
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u) {
        const __m512 v = _mm512_loadu_ps(xr + j + 16 * u);
        acc[u] = _mm512_fmadd_ps(v, v, acc[u]);
      }
    }
    for (; j < dim; j += 16) {
      const __m512 v = _mm512_maskz_loadu_ps(tail_mask(dim - j), xr + j);
      acc[0] = _mm512_fmadd_ps(v, v, acc[0]);
    }
    const float ss = _mm512_reduce_add_ps(
        _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
    const __m512 scale = _mm512_set1_ps(1.0f / std::sqrt(ss / static_cast<float>(dim) + eps));
    for (j = 0; j < dim; j += 16) {
      const __mmask16 m = tail_mask(dim - j);
      const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, xr + j), scale);
      _mm512_mask_storeu_ps(yr + j, m, _mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, weight + j)));
    }
  }
}

}  // namespace avx512
#endif  // DLOOP_KERNELS_X86

}  // namespace cpu

void rms_norm_f32(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim,
                  float eps) {
  DLOOP_ASSERT(dim >= 1 && n_rows >= 0);
  cpu::active_kernels().rms_norm_f32(x, weight, y, n_rows, dim, eps);
}

}  // namespace dloop::kernels
