// The forward pass shared by the dense diffusion architectures (llada, dream): one straight loop
// over layers on preallocated buffers. Per layer: RMSNorm, Q/K/V (+ biases), RoPE, bidirectional
// attention, output projection, residual; RMSNorm, SwiGLU FFN, residual. Then the final norm and
// the LM head for only the rows the caller asks for (the decoder needs logits of masked
// positions, not of the whole canvas).
#include <cmath>

#include "dloop/engine/model.h"
#include "dloop/kernels/dtype.h"

namespace dloop::engine {
namespace {

void grow(ForwardState& s, const ModelConfig& c, int64_t t) {
  if (t <= s.capacity) return;
  const auto n = static_cast<size_t>(t);
  s.x.resize(n * c.n_embd);
  s.xn.resize(n * c.n_embd);
  s.q.resize(n * c.n_head * c.head_dim);
  s.k.resize(n * c.n_head_kv * c.head_dim);
  s.v.resize(n * c.n_head_kv * c.head_dim);
  s.attn.resize(n * c.n_head * c.head_dim);
  s.proj.resize(n * c.n_embd);
  s.gate.resize(n * c.n_ff);
  s.up.resize(n * c.n_ff);
  s.rows.resize(n * c.n_embd);
  s.positions.resize(n);
  for (size_t i = 0; i < n; ++i) s.positions[i] = static_cast<int32_t>(i);
  s.capacity = t;
}

void embed(const ModelWeights& w, const ModelConfig& c, std::span<const int32_t> tokens, float* x) {
  const int64_t stride = kernels::row_bytes(w.token_embd.type, c.n_embd);
  const auto* base = static_cast<const uint8_t*>(w.token_embd.data);
  for (size_t t = 0; t < tokens.size(); ++t) {
    kernels::dequantize_row(w.token_embd.type, base + tokens[t] * stride, x + t * c.n_embd, c.n_embd);
  }
}

}  // namespace

base::Status Model::forward(kernels::ThreadPool& pool, std::span<const int32_t> tokens,
                            std::span<const int32_t> rows, float* logits, ForwardState& s) const {
  const ModelConfig& c = config_;
  const auto t_len = static_cast<int64_t>(tokens.size());
  if (t_len == 0) return base::invalid_argument("forward: empty canvas");
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= c.n_vocab) {
      return base::invalid_argument("forward: token id " + std::to_string(tokens[i]) + " at position " +
                                    std::to_string(i) + " is outside the vocabulary (" + std::to_string(c.n_vocab) + ")");
    }
  }
  for (int32_t r : rows) {
    if (r < 0 || r >= t_len) return base::invalid_argument("forward: logits row " + std::to_string(r) + " out of range");
  }
  grow(s, c, t_len);
  const int64_t E = c.n_embd, F = c.n_ff;
  const int64_t q_dim = c.n_head * c.head_dim, kv_dim = c.n_head_kv * c.head_dim;
  const kernels::AttentionShape shape{t_len, t_len, c.n_head, c.n_head_kv, c.head_dim,
                                      1.0f / std::sqrt(static_cast<float>(c.head_dim))};
  float* x = s.x.data();
  embed(weights_, c, tokens, x);
  for (const LayerWeights& l : weights_.layers) {
    kernels::rms_norm_f32(x, l.attn_norm.data(), s.xn.data(), t_len, E, c.rms_eps);
    kernels::matmul(pool, s.xn.data(), t_len, l.wq, s.q.data());
    kernels::matmul(pool, s.xn.data(), t_len, l.wk, s.k.data());
    kernels::matmul(pool, s.xn.data(), t_len, l.wv, s.v.data());
    if (!l.bq.empty()) {
      kernels::add_bias_f32(s.q.data(), l.bq.data(), t_len, q_dim);
      kernels::add_bias_f32(s.k.data(), l.bk.data(), t_len, kv_dim);
      kernels::add_bias_f32(s.v.data(), l.bv.data(), t_len, kv_dim);
    }
    kernels::rope_f32(s.q.data(), t_len, c.n_head, c.head_dim, s.positions.data(), c.rope_theta, c.rope_type);
    kernels::rope_f32(s.k.data(), t_len, c.n_head_kv, c.head_dim, s.positions.data(), c.rope_theta, c.rope_type);
    kernels::attention_f32(pool, shape, s.q.data(), s.k.data(), s.v.data(), s.attn.data());
    kernels::matmul(pool, s.attn.data(), t_len, l.wo, s.proj.data());
    kernels::add_f32(x, s.proj.data(), t_len * E);

    kernels::rms_norm_f32(x, l.ffn_norm.data(), s.xn.data(), t_len, E, c.rms_eps);
    kernels::matmul(pool, s.xn.data(), t_len, l.w_gate, s.gate.data());
    kernels::matmul(pool, s.xn.data(), t_len, l.w_up, s.up.data());
    kernels::swiglu_f32(s.gate.data(), s.up.data(), s.gate.data(), t_len * F);
    kernels::matmul(pool, s.gate.data(), t_len, l.w_down, s.proj.data());
    kernels::add_f32(x, s.proj.data(), t_len * E);
  }
  const auto n_rows = static_cast<int64_t>(rows.size());
  if (n_rows == 0) return base::Status();
  if (n_rows > t_len) return base::invalid_argument("forward: more logits rows than canvas positions");
  for (int64_t i = 0; i < n_rows; ++i) {
    kernels::rms_norm_f32(x + rows[i] * E, weights_.output_norm.data(), s.rows.data() + i * E, 1, E, c.rms_eps);
  }
  kernels::matmul(pool, s.rows.data(), n_rows, weights_.output, logits);
  return base::Status();
}

}  // namespace dloop::engine
