// Names and validation of the decoding options; see decoding.h.
#include <cmath>
#include <string>

#include "dloop/engine/decoding.h"

namespace dloop::engine {

std::optional<Schedule> parse_schedule(std::string_view name) {
  if (name == "block" || name == "blocks" || name == "llada") return Schedule::kBlock;
  if (name == "eps" || name == "dream") return Schedule::kEps;
  return std::nullopt;
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  if (name == "low_confidence" || name == "maskgit_plus" || name == "confidence") return Algorithm::kLowConfidence;
  if (name == "random") return Algorithm::kRandom;
  if (name == "topk_margin" || name == "margin") return Algorithm::kTopkMargin;
  if (name == "entropy") return Algorithm::kEntropy;
  if (name == "origin") return Algorithm::kOrigin;
  return std::nullopt;
}

const char* schedule_name(Schedule s) { return s == Schedule::kBlock ? "block" : "eps"; }

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::kLowConfidence: return "low_confidence";
    case Algorithm::kRandom: return "random";
    case Algorithm::kTopkMargin: return "topk_margin";
    case Algorithm::kEntropy: return "entropy";
    case Algorithm::kOrigin: return "origin";
  }
  return "?";
}

base::Status validate(const DecodeOptions& o) {
  using base::invalid_argument;
  if (o.gen_length < 1 || o.gen_length > 65536) return invalid_argument("gen_length must be in [1, 65536]");
  if (!(o.temperature >= 0) || !std::isfinite(o.temperature)) return invalid_argument("temperature must be >= 0");
  if (o.top_k < 0) return invalid_argument("top_k must be >= 0");
  if (!(o.top_p > 0)) return invalid_argument("top_p must be > 0");
  if (!(o.cfg_scale >= 0) || !std::isfinite(o.cfg_scale)) return invalid_argument("cfg_scale must be >= 0");
  if (!(o.alg_temp >= 0) || !std::isfinite(o.alg_temp)) return invalid_argument("alg_temp must be >= 0");
  if (o.threshold && !(*o.threshold > 0 && *o.threshold <= 1)) return invalid_argument("threshold must be in (0, 1]");
  if (o.schedule == Schedule::kBlock) {
    const int64_t bl = o.block_length > 0 ? o.block_length : o.gen_length;
    if (o.block_length < 0) return invalid_argument("block_length must be >= 0");
    if (o.algorithm == Algorithm::kOrigin) return invalid_argument("the block schedule does not support algorithm 'origin' (use the eps schedule)");
    if (o.gen_length % bl != 0) {
      return invalid_argument("gen_length " + std::to_string(o.gen_length) + " is not a multiple of block_length " + std::to_string(bl));
    }
    if (!o.threshold) {
      const int64_t n_blocks = o.gen_length / bl;
      if (o.steps % n_blocks != 0 || o.steps / n_blocks < 1 || o.steps / n_blocks > bl) {
        return invalid_argument("steps " + std::to_string(o.steps) + " must be a multiple of the " + std::to_string(n_blocks) +
                                " blocks with 1 <= steps per block <= block_length " + std::to_string(bl));
      }
    } else if (o.algorithm == Algorithm::kRandom) {
      return invalid_argument("threshold decoding needs a confidence algorithm, not 'random'");
    }
    if (o.alg_temp != 0) return invalid_argument("alg_temp applies to the eps schedule only");
  } else {
    if (o.algorithm == Algorithm::kRandom) return invalid_argument("the eps schedule does not support algorithm 'random'");
    if (o.threshold) return invalid_argument("threshold decoding applies to the block schedule only");
    if (o.steps < 1) return invalid_argument("steps must be >= 1");
    if (!(o.eps > 0 && o.eps < 1)) return invalid_argument("eps must be in (0, 1)");
  }
  return base::Status();
}

}  // namespace dloop::engine
