// Element-wise and row-wise f32 kernels of the transformer forward pass: RMS norm, rotary
// position embedding, SwiGLU, residual add and bias add. Single-threaded (they are memory-bound
// and small next to matmul and attention), vectorized with the widest ISA the CPU supports.
// Pure functions over caller-owned buffers; thread-safe on disjoint outputs.
#pragma once

#include <cstdint>

namespace dloop::kernels {

// y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * weight, per row of `dim` elements. x and y are
// [n_rows x dim]; y may equal x (in place) but must not partially overlap it. weight is [dim].
void rms_norm_f32(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim,
                  float eps);

enum class RopeType {
  kNorm,  // rotates adjacent pairs (2i, 2i+1): LLaDA (llama-style)
  kNeox,  // rotates (i, i + head_dim/2): Dream (Qwen2-style)
};

// In place on x [n_tokens x n_heads*head_dim]; positions [n_tokens]; pair i rotates by
// positions[t] * theta^(-2i/head_dim). head_dim is even.
void rope_f32(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
              const int32_t* positions, float theta, RopeType type);

// out[i] = silu(gate[i]) * up[i] = gate[i] / (1 + exp(-gate[i])) * up[i]. out may equal gate or up.
void swiglu_f32(const float* gate, const float* up, float* out, int64_t n);

// y[i] += x[i].
void add_f32(float* y, const float* x, int64_t n);

// y[r][j] += bias[j] for each of n_rows rows of dim elements.
void add_bias_f32(float* y, const float* bias, int64_t n_rows, int64_t dim);

}  // namespace dloop::kernels
