// The element-wise and row kernels of ops.h: argument checks, the RoPE angle tables (computed
// in double once per call and shared by every head), then the active ISA's loop.
// Pure; thread-safe on disjoint outputs.
#include <cmath>

#include "buffer.h"
#include "dloop/base/assert.h"
#include "dloop/kernels/ops.h"
#include "isa.h"

namespace dloop::kernels {

void rms_norm_f32(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim,
                  float eps) {
  DLOOP_ASSERT(dim >= 1 && n_rows >= 0);
  cpu::active_kernels().rms_norm_f32(x, weight, y, n_rows, dim, eps);
}

void rope_f32(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
              const int32_t* positions, float theta, RopeType type) {
  DLOOP_ASSERT_MSG(head_dim % 2 == 0, "rope_f32: head_dim must be even");
  if (n_tokens <= 0 || n_heads <= 0) return;
  const int64_t half = head_dim / 2;
  thread_local cpu::ScratchBuffer tables;
  float* cos_table = tables.get(2 * n_tokens * half);  // [n_tokens][half]
  float* sin_table = cos_table + n_tokens * half;      // [n_tokens][half]
  for (int64_t i = 0; i < half; ++i) {
    const double freq = std::pow(static_cast<double>(theta),
                                 -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
    for (int64_t t = 0; t < n_tokens; ++t) {
      const double angle = positions[t] * freq;
      cos_table[t * half + i] = static_cast<float>(std::cos(angle));
      sin_table[t * half + i] = static_cast<float>(std::sin(angle));
    }
  }
  cpu::active_kernels().rope_apply_f32(x, n_tokens, n_heads, head_dim, cos_table, sin_table,
                                       type == RopeType::kNeox);
}

void swiglu_f32(const float* gate, const float* up, float* out, int64_t n) {
  cpu::active_kernels().swiglu_f32(gate, up, out, n);
}

void add_f32(float* y, const float* x, int64_t n) { cpu::active_kernels().add_f32(y, x, n); }

void add_bias_f32(float* y, const float* bias, int64_t n_rows, int64_t dim) {
  cpu::active_kernels().add_bias_f32(y, bias, n_rows, dim);
}

}  // namespace dloop::kernels
