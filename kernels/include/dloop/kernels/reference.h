// Scalar reference implementations of every kernel: straightforward loops with double
// accumulation where it is cheap, no SIMD, no threads. They define what the fast kernels must
// compute and are what the tests compare against; too slow for inference. Thread-safe.
#pragma once

#include <cstdint>

#include "dloop/kernels/attention.h"
#include "dloop/kernels/matmul.h"
#include "dloop/kernels/ops.h"

namespace dloop::kernels::ref {

void matmul_ref(const float* x, int64_t m, const WeightView& w, float* y);
void dequantize_row_ref(DType type, const void* src, float* dst, int64_t n);
void rms_norm_f32_ref(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim,
                      float eps);
void rope_f32_ref(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
                  const int32_t* positions, float theta, RopeType type);
void attention_f32_ref(const AttentionShape& s, const float* q, const float* k, const float* v,
                       float* out);
void swiglu_f32_ref(const float* gate, const float* up, float* out, int64_t n);
void add_f32_ref(float* y, const float* x, int64_t n);
void add_bias_f32_ref(float* y, const float* bias, int64_t n_rows, int64_t dim);

}  // namespace dloop::kernels::ref
