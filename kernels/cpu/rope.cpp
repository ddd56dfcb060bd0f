// rope_f32: rotary position embedding in place, adjacent pairs (llama style) or rotate-half pairs
// (NeoX style). The angle tables are computed in double, shared by every head and cached per
// thread across calls with the same positions (a forward pass applies one set of positions to q
// and k of every layer); the rotation itself has scalar, AVX2 and AVX-512 variants.
// Pure apart from that per-thread cache; thread-safe on disjoint outputs.
#include <algorithm>
#include <cmath>
#include <vector>

#include "dloop/base/assert.h"
#include "dloop/kernels/ops.h"
#include "isa_impl.h"
#include "vec_math.h"

namespace dloop::kernels {
namespace cpu {

namespace scalar {

void rope_apply_f32(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
                    const float* cos_table, const float* sin_table, bool neox) {
  const int64_t half = head_dim / 2;
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t h = 0; h < n_heads; ++h) {
      float* xh = x + (t * n_heads + h) * head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const float c = cos_table[t * half + i], s = sin_table[t * half + i];
        const int64_t i0 = neox ? i : 2 * i, i1 = neox ? i + half : 2 * i + 1;
        const float x0 = xh[i0], x1 = xh[i1];
        xh[i0] = x0 * c - x1 * s;
        xh[i1] = x0 * s + x1 * c;
      }
    }
  }
}

}  // namespace scalar

#if DLOOP_KERNELS_X86
namespace avx2 {

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

}  // namespace avx2

namespace avx512 {

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

}  // namespace avx512
#endif  // DLOOP_KERNELS_X86

}  // namespace cpu

namespace {

// cos/sin of positions[t] * theta^(-2i/head_dim), [n_tokens][head_dim/2] each, computed in double.
// A forward pass applies the same positions to q and k of every layer, so the tables of the last
// call are kept (per thread) and reused when theta, head_dim and the positions match.
struct RopeTables {
  std::vector<int32_t> positions;
  float theta = 0;
  int64_t head_dim = 0;
  std::vector<float> cos_table, sin_table;

  void update(const int32_t* pos, int64_t n_tokens, float th, int64_t dim) {
    if (th == theta && dim == head_dim && static_cast<int64_t>(positions.size()) == n_tokens &&
        std::equal(positions.begin(), positions.end(), pos))
      return;
    positions.assign(pos, pos + n_tokens);
    theta = th;
    head_dim = dim;
    const int64_t half = dim / 2;
    cos_table.resize(static_cast<size_t>(n_tokens * half));
    sin_table.resize(static_cast<size_t>(n_tokens * half));
    for (int64_t i = 0; i < half; ++i) {
      const double freq =
          std::pow(static_cast<double>(th), -2.0 * static_cast<double>(i) / static_cast<double>(dim));
      for (int64_t t = 0; t < n_tokens; ++t) {
        const double angle = pos[t] * freq;
        cos_table[static_cast<size_t>(t * half + i)] = static_cast<float>(std::cos(angle));
        sin_table[static_cast<size_t>(t * half + i)] = static_cast<float>(std::sin(angle));
      }
    }
  }
};

}  // namespace

void rope_f32(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
              const int32_t* positions, float theta, RopeType type) {
  DLOOP_ASSERT_MSG(head_dim % 2 == 0, "rope_f32: head_dim must be even");
  if (n_tokens <= 0 || n_heads <= 0) return;
  thread_local RopeTables tables;
  tables.update(positions, n_tokens, theta, head_dim);
  cpu::active_kernels().rope_apply_f32(x, n_tokens, n_heads, head_dim, tables.cos_table.data(),
                                       tables.sin_table.data(), type == RopeType::kNeox);
}

}  // namespace dloop::kernels
