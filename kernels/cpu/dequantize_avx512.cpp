// AVX-512 row decoders, bit-identical to the scalar ggml decoders in dequantize.cpp: the same
// products in the same order, no fused multiply-add (this file is built with -ffp-contract=off;
// see kernels/CMakeLists.txt). Compiled through function target attributes; called only after
// runtime detection. Pure; thread-safe.
#include "simd.h"

#include <cstring>

#include "blocks.h"
#include "isa_impl.h"

#if DLOOP_KERNELS_X86

namespace dloop::kernels::cpu::avx512 {
namespace {

// 16 unsigned bytes -> 16 floats.
DLOOP_TARGET_AVX512 inline __m512 u8_to_ps(__m128i v) {
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(v));
}

DLOOP_TARGET_AVX512 void dequantize_f16(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i))));
  for (; i < n; ++i) y[i] = fp16_bits_to_f32(x[i]);
}

DLOOP_TARGET_AVX512 void dequantize_bf16(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
    _mm512_storeu_ps(y + i, _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)));
  }
  for (; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(x[i]) << 16;
    std::memcpy(y + i, &u, 4);
  }
}

DLOOP_TARGET_AVX512 void dequantize_q8_0(const BlockQ8_0* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQk) {
    const __m512 d = _mm512_set1_ps(fp16_bits_to_f32(x[i].d));
    const __m128i q0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[i].qs));
    const __m128i q1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[i].qs + 16));
    _mm512_storeu_ps(y, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q0)), d));
    _mm512_storeu_ps(y + 16, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q1)), d));
  }
}

DLOOP_TARGET_AVX512 void dequantize_q4_0(const BlockQ4_0* x, float* y, int64_t nb) {
  const __m128i low4 = _mm_set1_epi8(0x0F);
  const __m512i eight = _mm512_set1_epi32(8);
  for (int64_t i = 0; i < nb; ++i, y += kQk) {
    const __m512 d = _mm512_set1_ps(fp16_bits_to_f32(x[i].d));
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[i].qs));
    const __m512i lo = _mm512_sub_epi32(_mm512_cvtepu8_epi32(_mm_and_si128(q, low4)), eight);
    const __m512i hi =
        _mm512_sub_epi32(_mm512_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(q, 4), low4)), eight);
    _mm512_storeu_ps(y, _mm512_mul_ps(_mm512_cvtepi32_ps(lo), d));
    _mm512_storeu_ps(y + 16, _mm512_mul_ps(_mm512_cvtepi32_ps(hi), d));
  }
}

DLOOP_TARGET_AVX512 void dequantize_q4_k(const BlockQ4_K* x, float* y, int64_t nb) {
  const __m128i low4 = _mm_set1_epi8(0x0F);
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_bits_to_f32(x[i].d);
    const float dmin = fp16_bits_to_f32(x[i].dmin);
    const uint8_t* q = x[i].qs;
    for (int j = 0; j < 4; ++j, q += 32, y += 64) {
      uint8_t sc, m;
      q4k_scale_min(2 * j, x[i].scales, &sc, &m);
      const __m512 d1 = _mm512_set1_ps(d * sc), m1 = _mm512_set1_ps(dmin * m);
      q4k_scale_min(2 * j + 1, x[i].scales, &sc, &m);
      const __m512 d2 = _mm512_set1_ps(d * sc), m2 = _mm512_set1_ps(dmin * m);
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * h));
        const __m512 lo = u8_to_ps(_mm_and_si128(b, low4));
        const __m512 hi = u8_to_ps(_mm_and_si128(_mm_srli_epi16(b, 4), low4));
        _mm512_storeu_ps(y + 16 * h, _mm512_sub_ps(_mm512_mul_ps(d1, lo), m1));
        _mm512_storeu_ps(y + 32 + 16 * h, _mm512_sub_ps(_mm512_mul_ps(d2, hi), m2));
      }
    }
  }
}

DLOOP_TARGET_AVX512 void dequantize_q6_k(const BlockQ6_K* x, float* y, int64_t nb) {
  const __m512i low4 = _mm512_set1_epi32(0x0F), three = _mm512_set1_epi32(3);
  const __m512i bias = _mm512_set1_epi32(32);
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_bits_to_f32(x[i].d);
    const uint8_t* ql = x[i].ql;
    const uint8_t* qh = x[i].qh;
    const int8_t* sc = x[i].scales;
    for (int n = 0; n < kQkK; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
#pragma GCC unroll 2
      for (int is = 0; is < 2; ++is) {
        const int l = 16 * is;
        const __m512i a = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ql + l)));
        const __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ql + l + 32)));
        const __m512i h = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qh + l)));
        const __m512i q1 = _mm512_or_si512(_mm512_and_si512(a, low4),
                                           _mm512_slli_epi32(_mm512_and_si512(h, three), 4));
        const __m512i q2 = _mm512_or_si512(
            _mm512_and_si512(b, low4),
            _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(h, 2), three), 4));
        const __m512i q3 = _mm512_or_si512(
            _mm512_srli_epi32(a, 4),
            _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(h, 4), three), 4));
        const __m512i q4 = _mm512_or_si512(
            _mm512_srli_epi32(b, 4),
            _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(h, 6), three), 4));
        const __m512i q[4] = {q1, q2, q3, q4};
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
          const __m512 ds = _mm512_set1_ps(d * sc[is + 2 * g]);
          const __m512 qf = _mm512_cvtepi32_ps(_mm512_sub_epi32(q[g], bias));
          _mm512_storeu_ps(y + 32 * g + l, _mm512_mul_ps(ds, qf));
        }
      }
    }
  }
}

}  // namespace

DLOOP_TARGET_AVX512 void dequantize_row(DType type, const void* src, float* dst, int64_t n) {
  const int64_t nb = n / dtype_info(type).block_elems;
  switch (type) {
    case DType::kF32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::kF16: return dequantize_f16(static_cast<const uint16_t*>(src), dst, n);
    case DType::kBF16: return dequantize_bf16(static_cast<const uint16_t*>(src), dst, n);
    case DType::kQ8_0: return dequantize_q8_0(static_cast<const BlockQ8_0*>(src), dst, nb);
    case DType::kQ4_0: return dequantize_q4_0(static_cast<const BlockQ4_0*>(src), dst, nb);
    case DType::kQ4_K: return dequantize_q4_k(static_cast<const BlockQ4_K*>(src), dst, nb);
    case DType::kQ6_K: return dequantize_q6_k(static_cast<const BlockQ6_K*>(src), dst, nb);
  }
}

}  // namespace dloop::kernels::cpu::avx512

#endif  // DLOOP_KERNELS_X86
