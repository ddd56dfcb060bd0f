// Scalar reference kernels (dloop/kernels/reference.h): the definitions the fast kernels are
// tested against. Plain loops with double accumulation; no SIMD intrinsics, no threads.
// ref::dequantize_row_ref lives in dequantize.cpp next to the block decoders. Thread-safe.
#include <cmath>
#include <vector>

#include "dloop/base/assert.h"
#include "dloop/kernels/reference.h"

namespace dloop::kernels::ref {

void matmul_ref(const float* x, int64_t m, const WeightView& w, float* y) {
  const int64_t rb = row_bytes(w.type, w.cols);
  std::vector<float> row(static_cast<size_t>(w.cols));
  for (int64_t n = 0; n < w.rows; ++n) {
    dequantize_row_ref(w.type, static_cast<const uint8_t*>(w.data) + n * rb, row.data(), w.cols);
    for (int64_t i = 0; i < m; ++i) {
      const float* xi = x + i * w.cols;
      double acc = 0;
      for (int64_t k = 0; k < w.cols; ++k) acc += static_cast<double>(xi[k]) * row[k];
      y[i * w.rows + n] = static_cast<float>(acc);
    }
  }
}

void rms_norm_f32_ref(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim,
                      float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    double ss = 0;
    for (int64_t j = 0; j < dim; ++j) ss += static_cast<double>(x[r * dim + j]) * x[r * dim + j];
    const double scale = 1.0 / std::sqrt(ss / static_cast<double>(dim) + eps);
    for (int64_t j = 0; j < dim; ++j)
      y[r * dim + j] = static_cast<float>(x[r * dim + j] * scale * weight[j]);
  }
}

void rope_f32_ref(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
                  const int32_t* positions, float theta, RopeType type) {
  DLOOP_ASSERT(head_dim % 2 == 0);
  const int64_t half = head_dim / 2;
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t h = 0; h < n_heads; ++h) {
      float* xh = x + (t * n_heads + h) * head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const double freq = std::pow(static_cast<double>(theta),
                                     -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
        const double angle = positions[t] * freq;
        const double c = std::cos(angle), s = std::sin(angle);
        const int64_t i0 = type == RopeType::kNorm ? 2 * i : i;
        const int64_t i1 = type == RopeType::kNorm ? 2 * i + 1 : i + half;
        const double x0 = xh[i0], x1 = xh[i1];
        xh[i0] = static_cast<float>(x0 * c - x1 * s);
        xh[i1] = static_cast<float>(x0 * s + x1 * c);
      }
    }
  }
}

void attention_f32_ref(const AttentionShape& s, const float* q, const float* k, const float* v,
                       float* out) {
  DLOOP_ASSERT(s.n_head % s.n_head_kv == 0 && s.n_kv >= 1);
  const int64_t group = s.n_head / s.n_head_kv;
  const int64_t ldq = s.n_head * s.head_dim, ldkv = s.n_head_kv * s.head_dim;
  std::vector<double> logits(static_cast<size_t>(s.n_kv));
  std::vector<double> acc(static_cast<size_t>(s.head_dim));
  for (int64_t i = 0; i < s.n_q; ++i) {
    for (int64_t h = 0; h < s.n_head; ++h) {
      const float* qi = q + i * ldq + h * s.head_dim;
      const int64_t hk = h / group;
      double max_logit = -INFINITY;
      for (int64_t j = 0; j < s.n_kv; ++j) {
        const float* kj = k + j * ldkv + hk * s.head_dim;
        double dot = 0;
        for (int64_t d = 0; d < s.head_dim; ++d) dot += static_cast<double>(qi[d]) * kj[d];
        logits[j] = dot * s.scale;
        if (logits[j] > max_logit) max_logit = logits[j];
      }
      double sum = 0;
      for (int64_t j = 0; j < s.n_kv; ++j) sum += logits[j] = std::exp(logits[j] - max_logit);
      for (double& a : acc) a = 0;
      for (int64_t j = 0; j < s.n_kv; ++j) {
        const float* vj = v + j * ldkv + hk * s.head_dim;
        for (int64_t d = 0; d < s.head_dim; ++d) acc[d] += logits[j] * vj[d];
      }
      for (int64_t d = 0; d < s.head_dim; ++d)
        out[i * ldq + h * s.head_dim + d] = static_cast<float>(acc[d] / sum);
    }
  }
}

void swiglu_f32_ref(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double g = gate[i];
    out[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
  }
}

void add_f32_ref(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void add_bias_f32_ref(float* y, const float* bias, int64_t n_rows, int64_t dim) {
  for (int64_t r = 0; r < n_rows; ++r)
    for (int64_t j = 0; j < dim; ++j) y[r * dim + j] += bias[j];
}

}  // namespace dloop::kernels::ref
