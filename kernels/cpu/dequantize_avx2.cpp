// AVX2 row decoders, bit-identical to the scalar ggml decoders in dequantize.cpp: the same
// products in the same order, no fused multiply-add (this file is built with -ffp-contract=off;
// see kernels/CMakeLists.txt). Compiled through function target attributes; called only after
// runtime detection. Pure; thread-safe.
#include "simd.h"

#include <cstring>

#include "blocks.h"
#include "isa_impl.h"

#if DLOOP_KERNELS_X86

namespace dloop::kernels::cpu::avx2 {
namespace {

// 8 bytes at p (unsigned) -> 8 int32.
DLOOP_TARGET_AVX2 inline __m256i load_u8x8(const uint8_t* p) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

DLOOP_TARGET_AVX2 void dequantize_f16(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  for (; i < n; ++i) y[i] = fp16_bits_to_f32(x[i]);
}

DLOOP_TARGET_AVX2 void dequantize_bf16(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    _mm256_storeu_ps(y + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
  }
  for (; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(x[i]) << 16;
    std::memcpy(y + i, &u, 4);
  }
}

DLOOP_TARGET_AVX2 void dequantize_q8_0(const BlockQ8_0* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQk) {
    const __m256 d = _mm256_set1_ps(fp16_bits_to_f32(x[i].d));
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x[i].qs + 8 * j)));
      _mm256_storeu_ps(y + 8 * j, _mm256_mul_ps(_mm256_cvtepi32_ps(q), d));
    }
  }
}

DLOOP_TARGET_AVX2 void dequantize_q4_0(const BlockQ4_0* x, float* y, int64_t nb) {
  const __m256i low4 = _mm256_set1_epi32(0x0F), eight = _mm256_set1_epi32(8);
  for (int64_t i = 0; i < nb; ++i, y += kQk) {
    const __m256 d = _mm256_set1_ps(fp16_bits_to_f32(x[i].d));
#pragma GCC unroll 2
    for (int j = 0; j < 2; ++j) {
      const __m256i q = load_u8x8(x[i].qs + 8 * j);
      const __m256i lo = _mm256_sub_epi32(_mm256_and_si256(q, low4), eight);
      const __m256i hi = _mm256_sub_epi32(_mm256_srli_epi32(q, 4), eight);
      _mm256_storeu_ps(y + 8 * j, _mm256_mul_ps(_mm256_cvtepi32_ps(lo), d));
      _mm256_storeu_ps(y + 16 + 8 * j, _mm256_mul_ps(_mm256_cvtepi32_ps(hi), d));
    }
  }
}

DLOOP_TARGET_AVX2 void dequantize_q4_k(const BlockQ4_K* x, float* y, int64_t nb) {
  const __m256i low4 = _mm256_set1_epi32(0x0F);
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_bits_to_f32(x[i].d);
    const float dmin = fp16_bits_to_f32(x[i].dmin);
    const uint8_t* q = x[i].qs;
    for (int j = 0; j < 4; ++j, q += 32, y += 64) {
      uint8_t sc, m;
      q4k_scale_min(2 * j, x[i].scales, &sc, &m);
      const __m256 d1 = _mm256_set1_ps(d * sc), m1 = _mm256_set1_ps(dmin * m);
      q4k_scale_min(2 * j + 1, x[i].scales, &sc, &m);
      const __m256 d2 = _mm256_set1_ps(d * sc), m2 = _mm256_set1_ps(dmin * m);
#pragma GCC unroll 4
      for (int h = 0; h < 4; ++h) {
        const __m256i b = load_u8x8(q + 8 * h);
        const __m256 lo = _mm256_cvtepi32_ps(_mm256_and_si256(b, low4));
        const __m256 hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(b, 4));
        _mm256_storeu_ps(y + 8 * h, _mm256_sub_ps(_mm256_mul_ps(d1, lo), m1));
        _mm256_storeu_ps(y + 32 + 8 * h, _mm256_sub_ps(_mm256_mul_ps(d2, hi), m2));
      }
    }
  }
}

DLOOP_TARGET_AVX2 void dequantize_q6_k(const BlockQ6_K* x, float* y, int64_t nb) {
  const __m256i low4 = _mm256_set1_epi32(0x0F), three = _mm256_set1_epi32(3);
  const __m256i bias = _mm256_set1_epi32(32);
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_bits_to_f32(x[i].d);
    const uint8_t* ql = x[i].ql;
    const uint8_t* qh = x[i].qh;
    const int8_t* sc = x[i].scales;
    for (int n = 0; n < kQkK; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; l += 8) {
        const int is = l / 16;
        const __m256i a = load_u8x8(ql + l), b = load_u8x8(ql + l + 32), h = load_u8x8(qh + l);
        const __m256i q[4] = {
            _mm256_or_si256(_mm256_and_si256(a, low4), _mm256_slli_epi32(_mm256_and_si256(h, three), 4)),
            _mm256_or_si256(_mm256_and_si256(b, low4),
                            _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(h, 2), three), 4)),
            _mm256_or_si256(_mm256_srli_epi32(a, 4),
                            _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(h, 4), three), 4)),
            _mm256_or_si256(_mm256_srli_epi32(b, 4),
                            _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(h, 6), three), 4))};
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
          const __m256 ds = _mm256_set1_ps(d * sc[is + 2 * g]);
          const __m256 qf = _mm256_cvtepi32_ps(_mm256_sub_epi32(q[g], bias));
          _mm256_storeu_ps(y + 32 * g + l, _mm256_mul_ps(ds, qf));
        }
      }
    }
  }
}

}  // namespace

DLOOP_TARGET_AVX2 void dequantize_row(DType type, const void* src, float* dst, int64_t n) {
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

}  // namespace dloop::kernels::cpu::avx2

#endif  // DLOOP_KERNELS_X86
