// AVX2+FMA GEMM building blocks, the fallback for CPUs without AVX-512: 6x16 micro-kernel
// (12 ymm accumulators), B packing with 8x8 register transposes, scalar A packing. Layouts as in
// isa.h. Compiled through function target attributes; called only after runtime detection.
// Pure; thread-safe.
#include "simd.h"

#include <algorithm>

#include "isa_impl.h"

#if DLOOP_KERNELS_X86

namespace dloop::kernels::cpu::avx2 {
namespace {

constexpr int64_t kKc = 256;
constexpr int64_t kChunk = 256;

alignas(64) const float kZeros[kChunk] = {};

// Transposes the 8x8 block whose rows are r[0..8) in place: afterwards r[j] holds column j.
DLOOP_TARGET_AVX2 inline void transpose8(__m256 r[8]) {
  __m256 u[8];
#pragma GCC unroll 2
  for (int g = 0; g < 2; ++g) {
    const __m256 lo01 = _mm256_unpacklo_ps(r[4 * g], r[4 * g + 1]);
    const __m256 hi01 = _mm256_unpackhi_ps(r[4 * g], r[4 * g + 1]);
    const __m256 lo23 = _mm256_unpacklo_ps(r[4 * g + 2], r[4 * g + 3]);
    const __m256 hi23 = _mm256_unpackhi_ps(r[4 * g + 2], r[4 * g + 3]);
    u[4 * g + 0] = _mm256_shuffle_ps(lo01, lo23, 0x44);
    u[4 * g + 1] = _mm256_shuffle_ps(lo01, lo23, 0xEE);
    u[4 * g + 2] = _mm256_shuffle_ps(hi01, hi23, 0x44);
    u[4 * g + 3] = _mm256_shuffle_ps(hi01, hi23, 0xEE);
  }
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    r[c] = _mm256_permute2f128_ps(u[c], u[c + 4], 0x20);
    r[c + 4] = _mm256_permute2f128_ps(u[c], u[c + 4], 0x31);
  }
}

DLOOP_TARGET_AVX2 void transpose_rows_16(const float* const* rows, int64_t kc, float* dst) {
  int64_t c = 0;
  for (; c + 8 <= kc; c += 8) {
#pragma GCC unroll 2
    for (int g = 0; g < 2; ++g) {
      __m256 r[8];
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(rows[8 * g + i] + c);
      transpose8(r);
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) _mm256_store_ps(dst + (c + j) * kNr + 8 * g, r[j]);
    }
  }
  for (; c < kc; ++c)
    for (int64_t i = 0; i < kNr; ++i) dst[c * kNr + i] = rows[i][c];
}

// acc[R x 16] = A panel [kc][6] (first R rows) * B [kc][16].
template <int R>
DLOOP_TARGET_AVX2 inline void micro_kernel(int64_t kc, const float* a, const float* b, float* c,
                                           int64_t ldc, int64_t n_valid, bool accumulate) {
  __m256 c0[R], c1[R];
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i) c0[i] = c1[i] = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_load_ps(b);
    const __m256 b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      c0[i] = _mm256_fmadd_ps(ai, b0, c0[i]);
      c1[i] = _mm256_fmadd_ps(ai, b1, c1[i]);
    }
    a += kMr;
    b += kNr;
  }
  if (n_valid == kNr) {
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i) {
      if (accumulate) {
        c0[i] = _mm256_add_ps(c0[i], _mm256_loadu_ps(c + i * ldc));
        c1[i] = _mm256_add_ps(c1[i], _mm256_loadu_ps(c + i * ldc + 8));
      }
      _mm256_storeu_ps(c + i * ldc, c0[i]);
      _mm256_storeu_ps(c + i * ldc + 8, c1[i]);
    }
    return;
  }
  alignas(32) float tile[kNr];
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i) {
    _mm256_store_ps(tile, c0[i]);
    _mm256_store_ps(tile + 8, c1[i]);
    for (int64_t j = 0; j < n_valid; ++j) c[i * ldc + j] = accumulate ? c[i * ldc + j] + tile[j] : tile[j];
  }
}

using MicroKernel = void (*)(int64_t, const float*, const float*, float*, int64_t, int64_t, bool);
const MicroKernel kMicroKernels[kMr + 1] = {nullptr,         micro_kernel<1>, micro_kernel<2>,
                                            micro_kernel<3>, micro_kernel<4>, micro_kernel<5>,
                                            micro_kernel<6>};

}  // namespace

DLOOP_TARGET_AVX2 void pack_a(const float* a, int64_t lda, int64_t m, int64_t k, float* dst) {
  for (int64_t r0 = 0; r0 < m; r0 += kMr) {
    float* panel = dst + r0 * k;
    const int64_t rows = std::min<int64_t>(kMr, m - r0);
    for (int64_t c = 0; c < k; ++c)
      for (int64_t i = 0; i < kMr; ++i) panel[c * kMr + i] = i < rows ? a[(r0 + i) * lda + c] : 0.0f;
  }
}

DLOOP_TARGET_AVX2 void pack_b(DType type, const void* w, int64_t w_row_bytes, int64_t n,
                              int64_t k, float* dst) {
  alignas(64) float tmp[kNr][kChunk];
  const float* rows[kNr];
  const auto* base = static_cast<const uint8_t*>(w);
  for (int64_t k0 = 0; k0 < k; k0 += kChunk) {
    const int64_t kc = std::min(kChunk, k - k0);
    for (int64_t r = 0; r < kNr; ++r) {
      if (r >= n) {
        rows[r] = kZeros;
      } else if (type == DType::kF32) {
        rows[r] = reinterpret_cast<const float*>(base + r * w_row_bytes) + k0;
      } else {
        avx2::dequantize_row(type, base + r * w_row_bytes + row_bytes(type, k0), tmp[r], kc);
        rows[r] = tmp[r];
      }
    }
    transpose_rows_16(rows, kc, dst + k0 * kNr);
  }
}

DLOOP_TARGET_AVX2 void gemm_panel(int64_t m, int64_t n_valid, int64_t k, const float* a_panels,
                                  const float* b_panel, float* c, int64_t ldc, bool accumulate,
                                  const PrefetchRows& next) {
  // As in gemm_avx512.cpp: the next weight slice into L2, spread over the micro-kernel calls.
  const int64_t calls = ((k + kKc - 1) / kKc) * ((m + kMr - 1) / kMr);
  const int64_t lines_per_row = (next.bytes + 63) / 64;
  const int64_t lines_per_call = (next.rows * lines_per_row + calls - 1) / calls;
  int64_t pf_row = 0, pf_offset = 0;  // the next line to prefetch
  for (int64_t pc = 0; pc < k; pc += kKc) {
    const int64_t kc = std::min(kKc, k - pc);
    for (int64_t ir = 0; ir < m; ir += kMr) {
      const int64_t rows = std::min<int64_t>(kMr, m - ir);
      for (int64_t i = 0; i < lines_per_call && pf_row < next.rows; ++i) {
        _mm_prefetch(reinterpret_cast<const char*>(next.base + pf_row * next.stride + pf_offset),
                     _MM_HINT_T1);
        pf_offset += 64;
        if (pf_offset >= next.bytes) pf_offset = 0, ++pf_row;
      }
      kMicroKernels[rows](kc, a_panels + ir * k + pc * kMr, b_panel + pc * kNr, c + ir * ldc, ldc,
                          n_valid, accumulate || pc > 0);
    }
  }
}

}  // namespace dloop::kernels::cpu::avx2

#endif  // DLOOP_KERNELS_X86
