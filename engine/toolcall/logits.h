// Log-softmax helpers over one row of model logits, shared by the tool-call decoder's passes
// (tool choice, infilling, key check). The mask token is never an answer, so it is left out of
// the normalisation: probabilities are over the tokens that can actually be written.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace dloop::engine::toolcall {

// log(sum over v != excluded of exp(row[v])), computed stably in double.
inline double log_sum_exp_except(const float* row, size_t n_vocab, int32_t excluded) {
  double mx = -INFINITY;
  for (size_t v = 0; v < n_vocab; ++v) {
    if (static_cast<int32_t>(v) != excluded) mx = std::max(mx, static_cast<double>(row[v]));
  }
  double s = 0;
  for (size_t v = 0; v < n_vocab; ++v) {
    if (static_cast<int32_t>(v) != excluded) s += std::exp(static_cast<double>(row[v]) - mx);
  }
  return mx + std::log(s);
}

}  // namespace dloop::engine::toolcall
