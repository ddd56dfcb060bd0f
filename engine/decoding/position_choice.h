// Token choice and confidence at one masked canvas position, from its logits row: mask id
// excluded, top-k then top-p filtering, greedy or float64 Gumbel-max choice, and the confidence
// of the chosen algorithm (SPEC.md "Token choice" and "Confidence"). Not thread-safe (uses the
// caller's generator and scratch buffers).
#pragma once

#include <cstdint>
#include <vector>

#include "dloop/engine/decoding.h"
#include "rng.h"

namespace dloop::engine::detail {

struct PositionChoice {
  int32_t token = -1;
  double confidence = 0;  // unused by origin
};

class PositionChooser {
 public:
  PositionChooser(const DecodeOptions& options, int32_t mask_id) : options_(options), mask_id_(mask_id) {}
  // logits: n_vocab f32 values (after CFG and shift). Draws from rng as SPEC.md orders it.
  PositionChoice choose(const float* logits, int64_t n_vocab, SplitMix64& rng);

 private:
  void filter_top_k();
  void filter_top_p();

  const DecodeOptions& options_;
  int32_t mask_id_;
  std::vector<double> l_;        // [n_vocab] float64 logits being filtered
  std::vector<int32_t> order_;   // [n_vocab] ids by descending logit, lower id first
  std::vector<double> p_;        // [n_vocab] softmax of l_
};

}  // namespace dloop::engine::detail
