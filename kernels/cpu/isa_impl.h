// Internal: declarations of each ISA's leaf kernels (see isa.h for their contracts). Each ISA
// namespace holds the same set of names; isa.cpp assembles them into CpuKernels tables.
#pragma once

#include <cstdint>

#include "isa.h"

#define DLOOP_DECLARE_CPU_KERNELS()                                                             \
  void dequantize_row(DType type, const void* src, float* dst, int64_t n);                     \
  void pack_a(const float* a, int64_t lda, int64_t m, int64_t k, float* dst);                  \
  void pack_b(DType type, const void* w, int64_t w_row_bytes, int64_t n, int64_t k, float* dst); \
  void gemm_panel(int64_t m, int64_t n_valid, int64_t k, const float* a_panels,                \
                  const float* b_panel, float* c, int64_t ldc, bool accumulate,                \
                  const PrefetchRows& next);                                                   \
  void softmax_cols(float* panel, int64_t rows, float scale, float* sum_col);                  \
  void rms_norm_f32(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim, \
                    float eps);                                                                 \
  void swiglu_f32(const float* gate, const float* up, float* out, int64_t n);                  \
  void add_f32(float* y, const float* x, int64_t n);                                           \
  void add_bias_f32(float* y, const float* bias, int64_t n_rows, int64_t dim);                 \
  void rope_apply_f32(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,           \
                      const float* cos_table, const float* sin_table, bool neox);

namespace dloop::kernels::cpu {

namespace scalar {
inline constexpr int kMr = 4;
inline constexpr int kNr = 16;
DLOOP_DECLARE_CPU_KERNELS()
}  // namespace scalar

#if DLOOP_KERNELS_X86
namespace avx2 {
inline constexpr int kMr = 6;
inline constexpr int kNr = 16;
DLOOP_DECLARE_CPU_KERNELS()
}  // namespace avx2

namespace avx512 {
inline constexpr int kMr = 14;
inline constexpr int kNr = 32;
DLOOP_DECLARE_CPU_KERNELS()
}  // namespace avx512
#endif

// Scalar block decoders shared by every ISA for the f16 scale fields (exact conversions).
float fp16_bits_to_f32(uint16_t h);

}  // namespace dloop::kernels::cpu
