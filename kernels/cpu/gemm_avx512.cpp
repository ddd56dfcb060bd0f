// AVX-512 GEMM building blocks: A/B packing with 16x16 register transposes, and the 14x32
// register-tiled micro-kernel (28 zmm accumulators, B from two aligned loads per k, A broadcast
// from memory into the FMA). See isa.h for the packed layouts. Compiled for AVX-512 through
// function target attributes; only called after runtime detection. Pure; thread-safe.
#include "simd.h"

#include <algorithm>

#include "isa_impl.h"

#if DLOOP_KERNELS_X86

namespace dloop::kernels::cpu::avx512 {
namespace {

constexpr int64_t kKc = 256;     // k block: a B micro-panel of kKc x 32 floats (32 KiB) stays in L1
constexpr int64_t kChunk = 256;  // columns decoded at a time when packing non-f32 weights

alignas(64) const float kZeros[kChunk] = {};
// pack_a prefetch distance in floats: 16 lines ahead along each row of x.
constexpr int64_t kPackAhead = 256;

// Transposes the 16x16 block whose rows are r[0..16) in place: afterwards r[j] holds column j.
DLOOP_TARGET_AVX512 inline void transpose16(__m512 r[16]) {
  __m512 u[16];
#pragma GCC unroll 4
  for (int g = 0; g < 4; ++g) {
    const __m512 lo01 = _mm512_unpacklo_ps(r[4 * g], r[4 * g + 1]);
    const __m512 hi01 = _mm512_unpackhi_ps(r[4 * g], r[4 * g + 1]);
    const __m512 lo23 = _mm512_unpacklo_ps(r[4 * g + 2], r[4 * g + 3]);
    const __m512 hi23 = _mm512_unpackhi_ps(r[4 * g + 2], r[4 * g + 3]);
    // u[4g+c]: rows 4g..4g+3 of lane-local column c, in each 128-bit lane.
    u[4 * g + 0] = _mm512_shuffle_ps(lo01, lo23, 0x44);
    u[4 * g + 1] = _mm512_shuffle_ps(lo01, lo23, 0xEE);
    u[4 * g + 2] = _mm512_shuffle_ps(hi01, hi23, 0x44);
    u[4 * g + 3] = _mm512_shuffle_ps(hi01, hi23, 0xEE);
  }
  __m512 v[16];
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    v[c] = _mm512_shuffle_f32x4(u[c], u[c + 4], 0x88);
    v[c + 4] = _mm512_shuffle_f32x4(u[c], u[c + 4], 0xDD);
    v[c + 8] = _mm512_shuffle_f32x4(u[c + 8], u[c + 12], 0x88);
    v[c + 12] = _mm512_shuffle_f32x4(u[c + 8], u[c + 12], 0xDD);
  }
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    r[c] = _mm512_shuffle_f32x4(v[c], v[c + 8], 0x88);
    r[c + 8] = _mm512_shuffle_f32x4(v[c], v[c + 8], 0xDD);
    r[c + 4] = _mm512_shuffle_f32x4(v[c + 4], v[c + 12], 0x88);
    r[c + 12] = _mm512_shuffle_f32x4(v[c + 4], v[c + 12], 0xDD);
  }
}

// One A panel: rows [0, rows) of a (rows <= 14), columns [0, k) -> dst [k][14].
DLOOP_TARGET_AVX512 void pack_a_panel(const float* a, int64_t lda, int64_t rows, int64_t k,
                                      float* dst) {
  int64_t c = 0;
  for (; c + 16 <= k; c += 16) {
    __m512 r[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      if (i < rows) _mm_prefetch(reinterpret_cast<const char*>(a + i * lda + c + kPackAhead), _MM_HINT_T0);
      r[i] = i < rows ? _mm512_loadu_ps(a + i * lda + c) : _mm512_setzero_ps();
    }
    transpose16(r);
    // Full 16-lane stores, ascending: lanes 14 and 15 spill into the next column's slots and are
    // overwritten by its store. Only the panel's last column may not spill (the next panel can
    // belong to another thread); a scalar tail column rewrites all its slots anyway.
#pragma GCC unroll 15
    for (int j = 0; j < 15; ++j) _mm512_storeu_ps(dst + (c + j) * kMr, r[j]);
    if (c + 16 < k)
      _mm512_storeu_ps(dst + (c + 15) * kMr, r[15]);
    else
      _mm512_mask_storeu_ps(dst + (c + 15) * kMr, 0x3FFF, r[15]);
  }
  for (; c < k; ++c)
    for (int64_t i = 0; i < kMr; ++i) dst[c * kMr + i] = i < rows ? a[i * lda + c] : 0.0f;
}

// Columns [0, kc) of the 32 rows at rows[] -> dst [kc][32] (dst row stride 32).
DLOOP_TARGET_AVX512 void transpose_rows_32(const float* const* rows, int64_t kc, float* dst) {
  int64_t c = 0;
  for (; c + 16 <= kc; c += 16) {
#pragma GCC unroll 2
    for (int g = 0; g < 2; ++g) {
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(rows[16 * g + i] + c);
      transpose16(r);
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j) _mm512_store_ps(dst + (c + j) * kNr + 16 * g, r[j]);
    }
  }
  for (; c < kc; ++c)
    for (int64_t i = 0; i < kNr; ++i) dst[c * kNr + i] = rows[i][c];
}

// C tile [R x 32] (masked columns) = or += A panel [kc][14] (first R rows) * B [kc][32].
template <int R>
DLOOP_TARGET_AVX512 inline void micro_kernel(int64_t kc, const float* a, const float* b, float* c,
                                             int64_t ldc, __mmask16 m0, __mmask16 m1,
                                             bool accumulate) {
  // The C tile is needed only after the k loop; start fetching it now (rows of a wide y are far
  // apart, so the hardware prefetcher cannot guess them).
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16), _MM_HINT_T0);
  }
  __m512 c0[R], c1[R];
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) c0[i] = c1[i] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_load_ps(b);
    const __m512 b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 14
    for (int i = 0; i < R; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      c0[i] = _mm512_fmadd_ps(ai, b0, c0[i]);
      c1[i] = _mm512_fmadd_ps(ai, b1, c1[i]);
    }
    a += kMr;
    b += kNr;
  }
  if (accumulate) {
#pragma GCC unroll 14
    for (int i = 0; i < R; ++i) {
      c0[i] = _mm512_add_ps(c0[i], _mm512_maskz_loadu_ps(m0, c + i * ldc));
      c1[i] = _mm512_add_ps(c1[i], _mm512_maskz_loadu_ps(m1, c + i * ldc + 16));
    }
  }
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) {
    _mm512_mask_storeu_ps(c + i * ldc, m0, c0[i]);
    _mm512_mask_storeu_ps(c + i * ldc + 16, m1, c1[i]);
  }
}

using MicroKernel = void (*)(int64_t, const float*, const float*, float*, int64_t, __mmask16,
                             __mmask16, bool);
const MicroKernel kMicroKernels[kMr + 1] = {
    nullptr,          micro_kernel<1>,  micro_kernel<2>,  micro_kernel<3>,  micro_kernel<4>,
    micro_kernel<5>,  micro_kernel<6>,  micro_kernel<7>,  micro_kernel<8>,  micro_kernel<9>,
    micro_kernel<10>, micro_kernel<11>, micro_kernel<12>, micro_kernel<13>, micro_kernel<14>};

}  // namespace

DLOOP_TARGET_AVX512 void pack_a(const float* a, int64_t lda, int64_t m, int64_t k, float* dst) {
  for (int64_t r = 0; r < m; r += kMr)
    pack_a_panel(a + r * lda, lda, std::min<int64_t>(kMr, m - r), k, dst + r * k);
}

DLOOP_TARGET_AVX512 void pack_b(DType type, const void* w, int64_t w_row_bytes, int64_t n,
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
        avx512::dequantize_row(type, base + r * w_row_bytes + row_bytes(type, k0), tmp[r], kc);
        rows[r] = tmp[r];
      }
    }
    transpose_rows_32(rows, kc, dst + k0 * kNr);
  }
}

DLOOP_TARGET_AVX512 void gemm_panel(int64_t m, int64_t n_valid, int64_t k, const float* a_panels,
                                    const float* b_panel, float* c, int64_t ldc, bool accumulate,
                                    const PrefetchRows& next) {
  // The next weight slice is read as many short row streams the hardware prefetcher cannot
  // predict; fetching it into L2 a few lines per micro-kernel call hides the DRAM latency.
  const int64_t calls = ((k + kKc - 1) / kKc) * ((m + kMr - 1) / kMr);
  const int64_t lines_per_row = (next.bytes + 63) / 64;
  const int64_t lines_per_call = (next.rows * lines_per_row + calls - 1) / calls;
  int64_t pf_row = 0, pf_offset = 0;  // the next line to prefetch
  const __mmask16 m0 = n_valid >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << n_valid) - 1);
  const __mmask16 m1 = n_valid >= 32   ? 0xFFFF
                       : n_valid <= 16 ? 0
                                       : static_cast<__mmask16>((1u << (n_valid - 16)) - 1);
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
                          m0, m1, accumulate || pc > 0);
    }
  }
}

}  // namespace dloop::kernels::cpu::avx512

#endif  // DLOOP_KERNELS_X86
