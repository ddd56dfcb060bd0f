// The element-wise and row kernels of ops.h: argument checks, the RoPE angle tables (computed
// in double, shared by every head and cached across calls with the same positions), then the
// active ISA's loop.
// Pure; thread-safe on disjoint outputs.
#include <algorithm>
#include <cmath>
#include <vector>

#include "dloop/base/assert.h"
#include "dloop/kernels/ops.h"
#include "isa.h"

namespace dloop::kernels {

void rms_norm_f32(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim,
                  float eps) {
  DLOOP_ASSERT(dim >= 1 && n_rows >= 0);
  cpu::active_kernels().rms_norm_f32(x, weight, y, n_rows, dim, eps);
}

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

void swiglu_f32(const float* gate, const float* up, float* out, int64_t n) {
  cpu::active_kernels().swiglu_f32(gate, up, out, n);
}

void add_f32(float* y, const float* x, int64_t n) { cpu::active_kernels().add_f32(y, x, n); }

void add_bias_f32(float* y, const float* bias, int64_t n_rows, int64_t dim) {
  cpu::active_kernels().add_bias_f32(y, bias, n_rows, dim);
}

}  // namespace dloop::kernels
