// AVX2+FMA element-wise and row kernels (the fallback for CPUs without AVX-512): RMS norm,
// SwiGLU, adds, RoPE rotation and the attention column softmax, with a vector exp (Cody-Waite
// reduction, degree-7 Taylor polynomial, 2^n built in the exponent bits; inputs clamped to
// [-87.3, 88.3]). Compiled through function target attributes. Pure; thread-safe.
#include "simd.h"

#include <cmath>

#include "isa_impl.h"

#if DLOOP_KERNELS_X86

namespace dloop::kernels::cpu::avx2 {
namespace {

DLOOP_TARGET_AVX2 inline __m256 exp_ps(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3365f)), _mm256_set1_ps(88.3762f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606765330187045e-06f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

DLOOP_TARGET_AVX2 inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace

DLOOP_TARGET_AVX2 void softmax_cols(float* panel, int64_t rows, float scale, float* sum_col) {
  const __m256 vs = _mm256_set1_ps(scale);
  __m256 mx0 = _mm256_set1_ps(-INFINITY), mx1 = mx0;
  for (int64_t r = 0; r < rows; ++r) {
    mx0 = _mm256_max_ps(mx0, _mm256_mul_ps(_mm256_load_ps(panel + r * kNr), vs));
    mx1 = _mm256_max_ps(mx1, _mm256_mul_ps(_mm256_load_ps(panel + r * kNr + 8), vs));
  }
  __m256 s0 = _mm256_setzero_ps(), s1 = s0;
  for (int64_t r = 0; r < rows; ++r) {
    float* p = panel + r * kNr;
    const __m256 e0 = exp_ps(_mm256_fmsub_ps(_mm256_load_ps(p), vs, mx0));
    const __m256 e1 = exp_ps(_mm256_fmsub_ps(_mm256_load_ps(p + 8), vs, mx1));
    _mm256_store_ps(p, e0);
    _mm256_store_ps(p + 8, e1);
    s0 = _mm256_add_ps(s0, e0);
    s1 = _mm256_add_ps(s1, e1);
  }
  _mm256_storeu_ps(sum_col, s0);
  _mm256_storeu_ps(sum_col + 8, s1);
}

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

DLOOP_TARGET_AVX2 void add_f32(float* y, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] += x[i];
}

DLOOP_TARGET_AVX2 void add_bias_f32(float* y, const float* bias, int64_t n_rows, int64_t dim) {
  for (int64_t r = 0; r < n_rows; ++r) add_f32(y + r * dim, bias, dim);
}

DLOOP_TARGET_AVX2 void rope_apply_f32(float* x, int64_t n_tokens, int64_t n_heads,
                                      int64_t head_dim, const float* cos_table,
                                      const float* sin_table, bool neox) {
  const int64_t half = head_dim / 2;
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float* ct = cos_table + t * half;
    const float* st = sin_table + t * half;
    for (int64_t h = 0; h < n_heads; ++h) {
      float* xh = x + (t * n_heads + h) * head_dim;
      int64_t i = 0;
      if (neox) {
        for (; i + 8 <= half; i += 8) {
          const __m256 c = _mm256_loadu_ps(ct + i), s = _mm256_loadu_ps(st + i);
          const __m256 x0 = _mm256_loadu_ps(xh + i), x1 = _mm256_loadu_ps(xh + half + i);
          _mm256_storeu_ps(xh + i, _mm256_fmsub_ps(x0, c, _mm256_mul_ps(x1, s)));
          _mm256_storeu_ps(xh + half + i, _mm256_fmadd_ps(x0, s, _mm256_mul_ps(x1, c)));
        }
      }
      for (; i < half; ++i) {
        const int64_t i0 = neox ? i : 2 * i, i1 = neox ? i + half : 2 * i + 1;
        const float x0 = xh[i0], x1 = xh[i1];
        xh[i0] = x0 * ct[i] - x1 * st[i];
        xh[i1] = x0 * st[i] + x1 * ct[i];
      }
    }
  }
}

}  // namespace dloop::kernels::cpu::avx2

#endif  // DLOOP_KERNELS_X86
