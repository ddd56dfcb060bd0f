// The host reference of the device decoding step (device.h reference_choices): per row, the
// argmax or float64 Gumbel-max token, its probability, the top-two margin and the entropy, with
// the Gumbel uniforms drawn by counter from a SplitMix64 state exactly as the CPU decoder draws
// them in sequence (position_choice.cpp).
#include <cmath>
#include <limits>

#include "dloop/engine/device.h"
#include "rng.h"

namespace dloop::engine {

void reference_choices(const float* logits, int64_t n_rows, int64_t n_vocab, const ChoiceOptions& options,
                       TokenChoice* out) {
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* x = logits + r * n_vocab;
    int32_t best = -1, second = -1;
    for (int32_t v = 0; v < n_vocab; ++v) {
      if (v == options.exclude || std::isnan(x[v])) continue;
      if (best < 0 || x[v] > x[best]) {
        second = best;
        best = v;
      } else if (second < 0 || x[v] > x[second]) {
        second = v;
      }
    }
    if (best < 0 || !std::isfinite(x[best])) {
      out[r] = TokenChoice{};
      continue;
    }
    int32_t chosen = best;
    if (options.temperature > 0) {
      detail::SplitMix64 rng(options.rng_state);
      rng.skip(static_cast<uint64_t>(r * options.draws_per_row));
      double top = kNegInf;
      chosen = -1;
      for (int32_t v = 0; v < n_vocab; ++v) {
        double u = rng.uniform();
        if (u == 0.0) u = 0x1.0p-53;
        if (v == options.exclude || std::isnan(x[v]) || x[v] == -INFINITY) continue;
        const double score = static_cast<double>(x[v]) / options.temperature - std::log(-std::log(u));
        if (score > top) {
          top = score;
          chosen = v;
        }
      }
    }
    const double mx = x[best];
    double s = 0, a = 0;
    for (int32_t v = 0; v < n_vocab; ++v) {
      if (v == options.exclude || std::isnan(x[v])) continue;
      const double d = static_cast<double>(x[v]) - mx, e = std::exp(d);
      s += e;
      if (e > 0) a += e * d;
    }
    const double p2 = second >= 0 ? std::exp(static_cast<double>(x[second]) - mx) / s : 0.0;
    out[r] = TokenChoice{chosen, static_cast<float>(std::exp(static_cast<double>(x[chosen]) - mx) / s),
                         static_cast<float>(1.0 / s - p2), static_cast<float>(std::log(s) - a / s)};
  }
}

}  // namespace dloop::engine
