// Per-position token choice and confidence; see position_choice.h.
#include "position_choice.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace dloop::engine::detail {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

void softmax(const std::vector<double>& l, std::vector<double>& p) {
  double mx = kNegInf;
  for (double v : l) mx = std::max(mx, v);
  p.resize(l.size());
  double sum = 0;
  for (size_t i = 0; i < l.size(); ++i) {
    p[i] = l[i] == kNegInf ? 0.0 : std::exp(l[i] - mx);
    sum += p[i];
  }
  for (double& v : p) v /= sum;
}

}  // namespace

void PositionChooser::filter_top_k() {
  const auto k = static_cast<size_t>(options_.top_k);
  size_t finite = 0;
  for (double v : l_) finite += v != kNegInf;
  if (k == 0 || k >= finite) return;
  order_.resize(l_.size());
  std::iota(order_.begin(), order_.end(), 0);
  auto by_logit = [&](int32_t a, int32_t b) { return l_[a] != l_[b] ? l_[a] > l_[b] : a < b; };
  std::nth_element(order_.begin(), order_.begin() + static_cast<long>(k), order_.end(), by_logit);
  for (size_t i = k; i < order_.size(); ++i) l_[order_[i]] = kNegInf;
}

void PositionChooser::filter_top_p() {
  if (options_.top_p >= 1.0) return;
  softmax(l_, p_);
  order_.resize(l_.size());
  std::iota(order_.begin(), order_.end(), 0);
  std::sort(order_.begin(), order_.end(),
            [&](int32_t a, int32_t b) { return l_[a] != l_[b] ? l_[a] > l_[b] : a < b; });
  double csum = 0;
  size_t cut = order_.size() - 1;
  for (size_t i = 0; i < order_.size(); ++i) {
    csum += p_[order_[i]];
    if (csum >= options_.top_p) { cut = i; break; }
  }
  for (size_t i = cut + 1; i < order_.size(); ++i) l_[order_[i]] = kNegInf;
}

PositionChoice PositionChooser::choose(const float* logits, int64_t n_vocab, SplitMix64& rng) {
  l_.assign(logits, logits + n_vocab);
  if (mask_id_ >= 0 && mask_id_ < n_vocab) l_[static_cast<size_t>(mask_id_)] = kNegInf;
  filter_top_k();
  filter_top_p();

  PositionChoice out;
  double best = kNegInf;
  if (options_.temperature == 0) {
    for (int64_t v = 0; v < n_vocab; ++v) {
      if (l_[v] > best) { best = l_[v]; out.token = static_cast<int32_t>(v); }
    }
  } else {
    // float64 Gumbel-max: score = l / T - log(-log u), one uniform per id in id order.
    for (int64_t v = 0; v < n_vocab; ++v) {
      double u = rng.uniform();
      if (u == 0.0) u = 0x1.0p-53;
      if (l_[v] == kNegInf) continue;
      double score = l_[v] / options_.temperature - std::log(-std::log(u));
      if (score > best) { best = score; out.token = static_cast<int32_t>(v); }
    }
  }
  if (out.token < 0) out.token = 0;  // every logit was -inf (impossible for finite models)

  switch (options_.algorithm) {
    case Algorithm::kRandom: out.confidence = rng.uniform(); break;
    case Algorithm::kOrigin: break;
    case Algorithm::kLowConfidence:
      softmax(l_, p_);
      out.confidence = p_[static_cast<size_t>(out.token)];
      break;
    case Algorithm::kTopkMargin: {
      softmax(l_, p_);
      double a = 0, b = 0;
      for (double v : p_) {
        if (v > a) { b = a; a = v; } else if (v > b) { b = v; }
      }
      out.confidence = a - b;
      break;
    }
    case Algorithm::kEntropy: {
      softmax(l_, p_);
      double s = 0;
      for (double v : p_) if (v > 0) s += v * std::log(v);
      out.confidence = s;
      break;
    }
  }
  return out;
}

}  // namespace dloop::engine::detail
