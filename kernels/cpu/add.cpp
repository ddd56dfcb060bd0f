// add_f32 (y += x) and add_bias_f32 (y[r] += bias per row): the residual and bias adds, in
// scalar, AVX2 and AVX-512 variants and the public entry points that dispatch to the active ISA.
// Pure; thread-safe on disjoint outputs.
#include "dloop/kernels/ops.h"
#include "dloop/kernels/reference.h"
#include "isa_impl.h"
#include "vec_math.h"

namespace dloop::kernels {
namespace cpu {

namespace scalar {

void add_f32(float* y, const float* x, int64_t n) { ref::add_f32_ref(y, x, n); }

void add_bias_f32(float* y, const float* bias, int64_t n_rows, int64_t dim) {
  ref::add_bias_f32_ref(y, bias, n_rows, dim);
}

}  // namespace scalar

#if DLOOP_KERNELS_X86
namespace avx2 {

DLOOP_TARGET_AVX2 void add_f32(float* y, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] += x[i];
}

DLOOP_TARGET_AVX2 void add_bias_f32(float* y, const float* bias, int64_t n_rows, int64_t dim) {
  for (int64_t r = 0; r < n_rows; ++r) add_f32(y + r * dim, bias, dim);
}

}  // namespace avx2

namespace avx512 {

DLOOP_TARGET_AVX512 void add_f32(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(
        y + i, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, y + i), _mm512_maskz_loadu_ps(m, x + i)));
  }
}

DLOOP_TARGET_AVX512 void add_bias_f32(float* y, const float* bias, int64_t n_rows, int64_t dim) {
  for (int64_t r = 0; r < n_rows; ++r) add_f32(y + r * dim, bias, dim);
}

}  // namespace avx512
#endif  // DLOOP_KERNELS_X86

}  // namespace cpu

void add_f32(float* y, const float* x, int64_t n) { cpu::active_kernels().add_f32(y, x, n); }

void add_bias_f32(float* y, const float* bias, int64_t n_rows, int64_t dim) {
  cpu::active_kernels().add_bias_f32(y, bias, n_rows, dim);
}

}  // namespace dloop::kernels
