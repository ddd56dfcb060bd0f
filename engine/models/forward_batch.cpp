// forward_batch: Model::forward's layer loop over the packed rows of several partial canvases,
// with K/V kept per sequence in a KvRows (see forward_batch.h). The per-row operations and their
// order are Model::forward's (rms_norm, matmul, rope, attention over the sequence's K/V, residual
// adds), which is what makes cached and batched passes bit-identical where they see the same
// inputs: the matmul and attention kernels compute each output row independently of the others.
#include "dloop/engine/forward_batch.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "dloop/kernels/dtype.h"

namespace dloop::engine {

void KvRows::reserve(const ModelConfig& c, int64_t capacity) {
  const int64_t kv_dim = c.n_head_kv * c.head_dim;
  if (capacity <= capacity_ && kv_dim == kv_dim_ && c.n_layer == n_layer_) return;
  const int64_t keep = (kv_dim == kv_dim_ && c.n_layer == n_layer_) ? capacity_ : 0;
  const int64_t cap = std::max(capacity, capacity_);
  std::vector<float> k(static_cast<size_t>(c.n_layer * cap * kv_dim));
  std::vector<float> v(k.size());
  for (int64_t l = 0; l < c.n_layer && keep > 0; ++l) {
    const size_t n = static_cast<size_t>(keep * kv_dim);
    std::memcpy(k.data() + l * cap * kv_dim, k_.data() + l * capacity_ * kv_dim, n * sizeof(float));
    std::memcpy(v.data() + l * cap * kv_dim, v_.data() + l * capacity_ * kv_dim, n * sizeof(float));
  }
  k_ = std::move(k);
  v_ = std::move(v);
  n_layer_ = c.n_layer;
  kv_dim_ = kv_dim;
  capacity_ = cap;
}

void KvRows::copy_rows_from(const KvRows& src, int64_t n) {
  const size_t bytes = static_cast<size_t>(n * kv_dim_) * sizeof(float);
  for (int64_t l = 0; l < n_layer_; ++l) {
    std::memcpy(k(l), src.k(l), bytes);
    std::memcpy(v(l), src.v(l), bytes);
  }
}

namespace {

base::Status check_pass(const ModelConfig& c, const SequencePass& p) {
  const auto t_len = static_cast<int64_t>(p.canvas.size());
  if (!(p.lo >= 0 && p.lo < p.hi && p.hi <= t_len && p.hi <= p.kv_end && p.kv_end <= t_len)) {
    return base::invalid_argument("forward: bad pass range [" + std::to_string(p.lo) + ", " + std::to_string(p.hi) +
                                  ") with kv_end " + std::to_string(p.kv_end) + " over a canvas of " + std::to_string(t_len));
  }
  if (p.kv == nullptr || p.kv->capacity() < p.kv_end) return base::invalid_argument("forward: K/V rows too small for the pass");
  for (int64_t i = p.lo; i < p.hi; ++i) {
    if (p.canvas[i] < 0 || p.canvas[i] >= c.n_vocab) {
      return base::invalid_argument("forward: token id " + std::to_string(p.canvas[i]) + " at position " +
                                    std::to_string(i) + " is outside the vocabulary (" + std::to_string(c.n_vocab) + ")");
    }
  }
  for (int32_t r : p.rows) {
    if (r < p.lo || r >= p.hi) return base::invalid_argument("forward: logits row " + std::to_string(r) + " outside the computed rows");
  }
  if (!p.rows.empty() && p.logits == nullptr) return base::invalid_argument("forward: no logits buffer");
  return base::Status();
}

void grow(BatchState& s, const ModelConfig& c, int64_t n) {
  if (n <= s.capacity) return;
  const auto t = static_cast<size_t>(n);
  s.x.resize(t * c.n_embd);
  s.xn.resize(t * c.n_embd);
  s.q.resize(t * c.n_head * c.head_dim);
  s.k.resize(t * c.n_head_kv * c.head_dim);
  s.v.resize(t * c.n_head_kv * c.head_dim);
  s.attn.resize(t * c.n_head * c.head_dim);
  s.proj.resize(t * c.n_embd);
  s.gate.resize(t * c.n_ff);
  s.up.resize(t * c.n_ff);
  s.positions.resize(t);
  s.capacity = n;
}

}  // namespace

base::Status forward_batch(const Model& model, kernels::ThreadPool& pool, std::span<SequencePass> passes,
                           BatchState& s) {
  const ModelConfig& c = model.config();
  const ModelWeights& w = model.weights();
  base::Status first_error;
  std::vector<SequencePass*> live;          // passes that run
  std::vector<int64_t> offset;              // packed row of each live pass's lo
  int64_t n = 0, n_rows = 0;
  for (SequencePass& p : passes) {
    p.status = check_pass(c, p);
    if (!p.status.ok()) {
      if (first_error.ok()) first_error = p.status;
      continue;
    }
    live.push_back(&p);
    offset.push_back(n);
    n += p.hi - p.lo;
    n_rows += static_cast<int64_t>(p.rows.size());
  }
  if (live.empty()) return first_error;
  grow(s, c, n);
  const int64_t E = c.n_embd, F = c.n_ff;
  const int64_t q_dim = c.n_head * c.head_dim, kv_dim = c.n_head_kv * c.head_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  float* x = s.x.data();
  const int64_t embd_stride = kernels::row_bytes(w.token_embd.type, E);
  const auto* embd = static_cast<const uint8_t*>(w.token_embd.data);
  for (size_t i = 0; i < live.size(); ++i) {
    const SequencePass& p = *live[i];
    for (int64_t t = p.lo; t < p.hi; ++t) {
      const int64_t row = offset[i] + t - p.lo;
      kernels::dequantize_row(w.token_embd.type, embd + p.canvas[t] * embd_stride, x + row * E, E);
      s.positions[static_cast<size_t>(row)] = static_cast<int32_t>(t);
    }
  }
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const LayerWeights& lw = w.layers[l];
    kernels::rms_norm_f32(x, lw.attn_norm.data(), s.xn.data(), n, E, c.rms_eps);
    kernels::matmul(pool, s.xn.data(), n, lw.wq, s.q.data());
    kernels::matmul(pool, s.xn.data(), n, lw.wk, s.k.data());
    kernels::matmul(pool, s.xn.data(), n, lw.wv, s.v.data());
    if (!lw.bq.empty()) {
      kernels::add_bias_f32(s.q.data(), lw.bq.data(), n, q_dim);
      kernels::add_bias_f32(s.k.data(), lw.bk.data(), n, kv_dim);
      kernels::add_bias_f32(s.v.data(), lw.bv.data(), n, kv_dim);
    }
    kernels::rope_f32(s.q.data(), n, c.n_head, c.head_dim, s.positions.data(), c.rope_theta, c.rope_type);
    kernels::rope_f32(s.k.data(), n, c.n_head_kv, c.head_dim, s.positions.data(), c.rope_theta, c.rope_type);
    for (size_t i = 0; i < live.size(); ++i) {
      SequencePass& p = *live[i];
      const int64_t len = p.hi - p.lo;
      const auto li = static_cast<int64_t>(l);
      std::memcpy(p.kv->k(li) + p.lo * kv_dim, s.k.data() + offset[i] * kv_dim, static_cast<size_t>(len * kv_dim) * sizeof(float));
      std::memcpy(p.kv->v(li) + p.lo * kv_dim, s.v.data() + offset[i] * kv_dim, static_cast<size_t>(len * kv_dim) * sizeof(float));
      const kernels::AttentionShape shape{len, p.kv_end, c.n_head, c.n_head_kv, c.head_dim, scale};
      kernels::attention_f32(pool, shape, s.q.data() + offset[i] * q_dim, p.kv->k(li), p.kv->v(li),
                             s.attn.data() + offset[i] * q_dim);
    }
    kernels::matmul(pool, s.attn.data(), n, lw.wo, s.proj.data());
    kernels::add_f32(x, s.proj.data(), n * E);

    kernels::rms_norm_f32(x, lw.ffn_norm.data(), s.xn.data(), n, E, c.rms_eps);
    kernels::matmul(pool, s.xn.data(), n, lw.w_gate, s.gate.data());
    kernels::matmul(pool, s.xn.data(), n, lw.w_up, s.up.data());
    kernels::swiglu_f32(s.gate.data(), s.up.data(), s.gate.data(), n * F);
    kernels::matmul(pool, s.gate.data(), n, lw.w_down, s.proj.data());
    kernels::add_f32(x, s.proj.data(), n * E);
  }
  if (n_rows == 0) return first_error;
  const auto V = static_cast<size_t>(c.n_vocab);
  s.rows.resize(static_cast<size_t>(n_rows * E));
  s.logits.resize(static_cast<size_t>(n_rows) * V);
  int64_t r = 0;
  for (size_t i = 0; i < live.size(); ++i) {
    for (int32_t row : live[i]->rows) {
      const int64_t packed = offset[i] + row - live[i]->lo;
      kernels::rms_norm_f32(x + packed * E, w.output_norm.data(), s.rows.data() + r * E, 1, E, c.rms_eps);
      ++r;
    }
  }
  kernels::matmul(pool, s.rows.data(), n_rows, w.output, s.logits.data());
  r = 0;
  for (SequencePass* p : live) {
    const size_t count = p->rows.size();
    if (count > 0) std::memcpy(p->logits, s.logits.data() + static_cast<size_t>(r) * V, count * V * sizeof(float));
    r += static_cast<int64_t>(count);
  }
  return first_error;
}

}  // namespace dloop::engine
