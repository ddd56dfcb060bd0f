// swiglu_f32: out = silu(gate) * up = gate / (1 + exp(-gate)) * up, in scalar, AVX2 and AVX-512
// variants (vector exp from vec_math.h) and the public entry point that dispatches to the active
// ISA. Pure; thread-safe on disjoint outputs.
#include <cmath>

#include "dloop/kernels/ops.h"
#include "dloop/kernels/reference.h"
#include "isa_impl.h"
#include "vec_math.h"

namespace dloop::kernels {
namespace cpu {

namespace scalar {

void swiglu_f32(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

}  // namespace scalar

#if DLOOP_KERNELS_X86
namespace avx2 {

DLOOP_TARGET_AVX2 void swiglu_f32(const float* gate, const float* up, float* out, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), g));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, e)),
                                            _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

}  // namespace avx2

namespace avx512 {

DLOOP_TARGET_AVX512 void swiglu_f32(const float* gate, const float* up, float* out, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m512 g = _mm512_maskz_loadu_ps(m, gate + i);
    const __m512 u = _mm512_maskz_loadu_ps(m, up + i);
    const __m512 e = exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), g));
    const __m512 silu = _mm512_div_ps(g, _mm512_add_ps(one, e));
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(silu, u));
  }
}

}  // namespace avx512
#endif  // DLOOP_KERNELS_X86

}  // namespace cpu

void swiglu_f32(const float* gate, const float* up, float* out, int64_t n) {
  cpu::active_kernels().swiglu_f32(gate, up, out, n);
}

}  // namespace dloop::kernels
