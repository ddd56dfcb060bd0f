// AVX-512 element-wise and row kernels: RMS norm, SwiGLU, adds, RoPE rotation and the column
// softmax used by attention, with a vector exp (Cody-Waite range reduction, degree-7 Taylor
// polynomial, vscalefps; about 2 ulp). Compiled through function target attributes; called only
// after runtime detection. Pure; thread-safe on disjoint outputs.
#include "simd.h"

#include <cmath>

#include "isa_impl.h"

#if DLOOP_KERNELS_X86

namespace dloop::kernels::cpu::avx512 {
namespace {

DLOOP_TARGET_AVX512 inline __m512 exp_ps(__m512 x) {
  // exp(x) = 2^n * exp(r), n = round(x / ln2), |r| <= ln2/2. Below -104 the result is 0, above
  // 89 it is inf; vscalefps gets both (and subnormals) right.
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-104.0f)), _mm512_set1_ps(89.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187045e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

DLOOP_TARGET_AVX512 inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
}

}  // namespace

DLOOP_TARGET_AVX512 void softmax_cols(float* panel, int64_t rows, float scale, float* sum_col) {
  const __m512 vs = _mm512_set1_ps(scale);
  __m512 mx0 = _mm512_set1_ps(-INFINITY), mx1 = mx0;
  for (int64_t r = 0; r < rows; ++r) {
    mx0 = _mm512_max_ps(mx0, _mm512_mul_ps(_mm512_load_ps(panel + r * kNr), vs));
    mx1 = _mm512_max_ps(mx1, _mm512_mul_ps(_mm512_load_ps(panel + r * kNr + 16), vs));
  }
  __m512 s0 = _mm512_setzero_ps(), s1 = s0;
  for (int64_t r = 0; r < rows; ++r) {
    float* p = panel + r * kNr;
    const __m512 e0 = exp_ps(_mm512_fmsub_ps(_mm512_load_ps(p), vs, mx0));
    const __m512 e1 = exp_ps(_mm512_fmsub_ps(_mm512_load_ps(p + 16), vs, mx1));
    _mm512_store_ps(p, e0);
    _mm512_store_ps(p + 16, e1);
    s0 = _mm512_add_ps(s0, e0);
    s1 = _mm512_add_ps(s1, e1);
  }
  _mm512_storeu_ps(sum_col, s0);
  _mm512_storeu_ps(sum_col + 16, s1);
}

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

DLOOP_TARGET_AVX512 void rope_apply_f32(float* x, int64_t n_tokens, int64_t n_heads,
                                        int64_t head_dim, const float* cos_table,
                                        const float* sin_table, bool neox) {
  const int64_t half = head_dim / 2;
  // Adjacent pairs: lane 2i and 2i+1 both use cos/sin[i]; the partner of lane 2i is 2i+1.
  const __m512i dup = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
  const __mmask16 odd = 0xAAAA;
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float* ct = cos_table + t * half;
    const float* st = sin_table + t * half;
    for (int64_t h = 0; h < n_heads; ++h) {
      float* xh = x + (t * n_heads + h) * head_dim;
      if (neox) {
        for (int64_t i = 0; i < half; i += 16) {
          const __mmask16 m = tail_mask(half - i);
          const __m512 c = _mm512_maskz_loadu_ps(m, ct + i), s = _mm512_maskz_loadu_ps(m, st + i);
          const __m512 x0 = _mm512_maskz_loadu_ps(m, xh + i);
          const __m512 x1 = _mm512_maskz_loadu_ps(m, xh + half + i);
          _mm512_mask_storeu_ps(xh + i, m, _mm512_fmsub_ps(x0, c, _mm512_mul_ps(x1, s)));
          _mm512_mask_storeu_ps(xh + half + i, m, _mm512_fmadd_ps(x0, s, _mm512_mul_ps(x1, c)));
        }
      } else {
        for (int64_t i = 0; i < half; i += 8) {
          const int64_t pairs = half - i < 8 ? half - i : 8;
          const __mmask16 m = tail_mask(2 * pairs);
          const __m512 c = _mm512_permutexvar_ps(dup, _mm512_maskz_loadu_ps(tail_mask(pairs), ct + i));
          __m512 s = _mm512_permutexvar_ps(dup, _mm512_maskz_loadu_ps(tail_mask(pairs), st + i));
          s = _mm512_mask_sub_ps(s, static_cast<__mmask16>(~odd), _mm512_setzero_ps(), s);  // -s, +s
          const __m512 v = _mm512_maskz_loadu_ps(m, xh + 2 * i);
          const __m512 swapped = _mm512_permute_ps(v, 0xB1);  // (x1, x0) per pair
          _mm512_mask_storeu_ps(xh + 2 * i, m, _mm512_fmadd_ps(v, c, _mm512_mul_ps(swapped, s)));
        }
      }
    }
  }
}

}  // namespace dloop::kernels::cpu::avx512

#endif  // DLOOP_KERNELS_X86
