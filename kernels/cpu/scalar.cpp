// The portable backend: plain C++ versions of every CpuKernels entry (4x16 register tile), used
// when the CPU has no AVX2 and as the baseline the SIMD backends are tested against besides the
// references. The compiler may auto-vectorize them for the baseline ISA. Pure; thread-safe.
#include <algorithm>
#include <cmath>

#include "dloop/kernels/reference.h"
#include "isa_impl.h"

namespace dloop::kernels::cpu::scalar {

void pack_a(const float* a, int64_t lda, int64_t m, int64_t k, float* dst) {
  for (int64_t r0 = 0; r0 < m; r0 += kMr) {
    float* panel = dst + r0 * k;
    for (int64_t c = 0; c < k; ++c)
      for (int64_t i = 0; i < kMr; ++i) panel[c * kMr + i] = r0 + i < m ? a[(r0 + i) * lda + c] : 0.0f;
  }
}

void pack_b(DType type, const void* w, int64_t w_row_bytes, int64_t n, int64_t k, float* dst) {
  constexpr int64_t kChunk = 256;
  float tmp[kChunk];
  const auto* base = static_cast<const uint8_t*>(w);
  for (int64_t k0 = 0; k0 < k; k0 += kChunk) {
    const int64_t kc = std::min(kChunk, k - k0);
    for (int64_t r = 0; r < kNr; ++r) {
      if (r < n) scalar::dequantize_row(type, base + r * w_row_bytes + row_bytes(type, k0), tmp, kc);
      for (int64_t c = 0; c < kc; ++c) dst[(k0 + c) * kNr + r] = r < n ? tmp[c] : 0.0f;
    }
  }
}

void gemm_panel(int64_t m, int64_t n_valid, int64_t k, const float* a_panels,
                const float* b_panel, float* c, int64_t ldc, bool accumulate,
                const PrefetchRows& /*next: a hint this backend ignores*/) {
  for (int64_t r0 = 0; r0 < m; r0 += kMr) {
    const float* a = a_panels + r0 * k;
    float acc[kMr][kNr] = {};
    for (int64_t p = 0; p < k; ++p)
      for (int64_t i = 0; i < kMr; ++i)
        for (int64_t j = 0; j < kNr; ++j) acc[i][j] += a[p * kMr + i] * b_panel[p * kNr + j];
    for (int64_t i = 0; i < kMr && r0 + i < m; ++i)
      for (int64_t j = 0; j < n_valid; ++j)
        c[(r0 + i) * ldc + j] = accumulate ? c[(r0 + i) * ldc + j] + acc[i][j] : acc[i][j];
  }
}

void softmax_cols(float* panel, int64_t rows, float scale, float* sum_col) {
  for (int64_t j = 0; j < kNr; ++j) {
    float mx = -INFINITY;
    for (int64_t r = 0; r < rows; ++r) mx = std::max(mx, panel[r * kNr + j] * scale);
    float sum = 0;
    for (int64_t r = 0; r < rows; ++r) sum += panel[r * kNr + j] = std::exp(panel[r * kNr + j] * scale - mx);
    sum_col[j] = sum;
  }
}

void rms_norm_f32(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim,
                  float eps) {
  ref::rms_norm_f32_ref(x, weight, y, n_rows, dim, eps);
}

void swiglu_f32(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void add_f32(float* y, const float* x, int64_t n) { ref::add_f32_ref(y, x, n); }

void add_bias_f32(float* y, const float* bias, int64_t n_rows, int64_t dim) {
  ref::add_bias_f32_ref(y, bias, n_rows, dim);
}

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

}  // namespace dloop::kernels::cpu::scalar
