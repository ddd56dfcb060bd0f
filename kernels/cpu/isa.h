// Internal to kernels/: the per-ISA kernel tables and runtime dispatch.
// Each kernel family file defines its leaf functions in namespaces scalar, avx2 and avx512
// (gemm_scalar.cpp, gemm_avx2.cpp and gemm_avx512.cpp, dequantize*.cpp, and rms_norm.cpp,
// rope.cpp, swiglu.cpp, add.cpp, attention.cpp with all three variants each); isa.cpp collects
// them into one CpuKernels table per ISA. SIMD code is compiled through function target
// attributes, never file-wide -m flags, so no inline std:: code compiled for a wider ISA can
// leak into baseline code through the linker's choice among duplicate inline definitions. The
// public entry points call through the active table.
// Thread-safety: the tables are immutable; the active ISA is an atomic, read once per call.
#pragma once

#include <cstdint>

#include "dloop/kernels/dtype.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define DLOOP_KERNELS_X86 1
#define DLOOP_TARGET_AVX2 __attribute__((target("avx2,fma,f16c,bmi,bmi2")))
#define DLOOP_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c,bmi,bmi2")))
#else
#define DLOOP_KERNELS_X86 0
#endif

namespace dloop::kernels::cpu {

enum class Isa { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

const char* isa_name(Isa isa);
// The widest ISA this CPU and OS support among those compiled in.
Isa detected_isa();
// The ISA the public kernels use: detected_isa(), capped by the DLOOP_KERNELS_ISA environment
// variable ("scalar", "avx2", "avx512") read once, or by set_active_isa.
Isa active_isa();
// For tests and benchmarks: caps the active ISA at min(isa, detected_isa()); returns the ISA set.
Isa set_active_isa(Isa isa);

// Register blocking shared by every ISA's GEMM: C[m x n] += A[m x k] * B[k x n] where
//  - packed A ("A panels") is ceil(m/mr) panels, panel p holding rows p*mr.. as [k][mr] floats
//    (rows past m are zero), panel p at offset p*mr*k;
//  - packed B ("B panel") is one panel of nr columns as [k][nr] floats (columns past n are zero),
//    64-byte aligned.
// Memory to pull into L2 while gemm_panel computes: `rows` rows of `bytes` bytes, `stride` bytes
// apart (the weight slice the next pack_b will read). rows == 0: nothing.
struct PrefetchRows {
  const uint8_t* base = nullptr;
  int64_t stride = 0;
  int64_t rows = 0;
  int64_t bytes = 0;
};

struct CpuKernels {
  Isa isa;
  int mr;  // rows of A per panel / micro-tile rows
  int nr;  // columns of B per panel / micro-tile columns

  // dst[0..n) = dequantized src; exact ggml semantics (bit-identical to ref::dequantize_row_ref).
  void (*dequantize_row)(DType type, const void* src, float* dst, int64_t n);

  // Packs rows [0, m) of a (row stride lda floats), columns [0, k), into A panels at dst.
  void (*pack_a)(const float* a, int64_t lda, int64_t m, int64_t k, float* dst);
  // Packs n <= nr rows of a weight matrix of `type` (row i at w + i*w_row_bytes), columns [0, k),
  // converted to f32, into one B panel at dst ([k][nr]). k is a multiple of the block size.
  void (*pack_b)(DType type, const void* w, int64_t w_row_bytes, int64_t n, int64_t k, float* dst);
  // c[m x n_valid] (row stride ldc) = (or += when accumulate) A panels (m x k) * B panel
  // (k x n_valid); n_valid <= nr. Blocks k internally so a B slice stays in L1. Spreads
  // prefetches of `next` over the micro-kernel calls.
  void (*gemm_panel)(int64_t m, int64_t n_valid, int64_t k, const float* a_panels,
                     const float* b_panel, float* c, int64_t ldc, bool accumulate,
                     const PrefetchRows& next);

  // Softmax helpers over a B panel [rows][nr] of logits, per column: max_col = max over rows;
  // then p = exp(scale * (s - max)) in place and sum_col = sum of p.
  void (*softmax_cols)(float* panel, int64_t rows, float scale, float* sum_col);

  void (*rms_norm_f32)(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim,
                       float eps);
  void (*swiglu_f32)(const float* gate, const float* up, float* out, int64_t n);
  void (*add_f32)(float* y, const float* x, int64_t n);
  void (*add_bias_f32)(float* y, const float* bias, int64_t n_rows, int64_t dim);
  // Rotates pairs of x[t][h*head_dim ..] with per-token tables cos/sin [n_tokens][head_dim/2].
  void (*rope_apply_f32)(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
                         const float* cos_table, const float* sin_table, bool neox);
};

const CpuKernels& scalar_kernels();
#if DLOOP_KERNELS_X86
const CpuKernels& avx2_kernels();
const CpuKernels& avx512_kernels();
#endif
const CpuKernels& kernels_for(Isa isa);
inline const CpuKernels& active_kernels() { return kernels_for(active_isa()); }

}  // namespace dloop::kernels::cpu
