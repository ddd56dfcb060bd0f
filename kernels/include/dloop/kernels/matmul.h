// Matrix multiplication against a weight matrix in ggml layout, and row dequantization.
// matmul picks the widest compiled ISA this CPU supports (AVX-512, else AVX2+FMA, else scalar)
// once, at first use. Thread-safety: matmul may run concurrently on different pools; a pool runs
// one call at a time (see thread_pool.h). dequantize_row is pure and thread-safe.
#pragma once

#include <cstdint>

#include "dloop/kernels/dtype.h"
#include "dloop/kernels/thread_pool.h"

namespace dloop::kernels {

// A weight matrix in ggml layout: `rows` rows (output features, ne1) of `cols` elements (input
// features, ne0), each row row_bytes(type, cols) bytes, contiguous. Non-owning: data must outlive
// every call that uses the view. cols is a multiple of the type's block size.
struct WeightView {
  const void* data;
  DType type;
  int64_t rows;
  int64_t cols;
};

// y[m x w.rows] = x[m x w.cols] * w^T, all row-major f32 and densely packed. y is overwritten and
// must not overlap x. m >= 1. Quantized weights are dequantized to f32 and multiplied in f32, so
// the result matches dequantize_row + an f32 GEMM up to summation order. Results do not depend on
// the pool size. Scratch (packed x, about m * cols floats up to 384 rows) is kept per calling
// thread between calls.
// Precondition violations (empty shape, cols not a multiple of the block size) abort.
void matmul(ThreadPool& pool, const float* x, int64_t m, const WeightView& w, float* y);

// dst[0..n) = the f32 values of the first n elements encoded at src, with exactly ggml's
// semantics (dequantize_row_* in ggml-quants.c). n is a multiple of the type's block size.
void dequantize_row(DType type, const void* src, float* dst, int64_t n);

// Half-precision scalar conversions (IEEE binary16 with subnormals/inf/NaN; bfloat16).
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);    // round to nearest even
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);   // round to nearest even, NaN kept quiet

}  // namespace dloop::kernels
