// Masked-diffusion decoding: the LLaDA block schedule (low-confidence or random remasking,
// float64 Gumbel-max temperature, classifier-free guidance), Dream's eps schedule (origin,
// maskgit_plus, topk_margin, entropy, alg_temp, top-k/top-p), Fast-dLLM confidence-threshold
// parallel decoding, and EOS stop. Semantics are fixed by tests/reference/SPEC.md and checked
// against the NumPy reference's goldens. Deterministic for a fixed seed.
// Thread-safety: decode() uses only its arguments; concurrent calls need separate ForwardStates.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "dloop/base/status.h"
#include "dloop/engine/forwarder.h"
#include "dloop/engine/model.h"

namespace dloop::engine {

enum class Schedule { kBlock, kEps };
// maskgit_plus is low_confidence (p of the chosen token).
enum class Algorithm { kLowConfidence, kRandom, kTopkMargin, kEntropy, kOrigin };

std::optional<Schedule> parse_schedule(std::string_view name);
std::optional<Algorithm> parse_algorithm(std::string_view name);
const char* schedule_name(Schedule s);
const char* algorithm_name(Algorithm a);

struct DecodeOptions {
  int64_t gen_length = 128;    // answer canvas length
  int64_t steps = 128;         // denoising steps (ignored by threshold decoding)
  Schedule schedule = Schedule::kBlock;
  int64_t block_length = 32;   // block schedule; 0 means gen_length (one block)
  Algorithm algorithm = Algorithm::kLowConfidence;
  double temperature = 0.0;    // 0 = greedy argmax
  int64_t top_k = 0;           // 0 = off
  double top_p = 1.0;          // >= 1 = off
  std::optional<double> threshold;  // block schedule: Fast-dLLM threshold decoding when set
  double cfg_scale = 0.0;      // > 0: classifier-free guidance (two passes per step)
  double eps = 1e-3;           // eps schedule
  double alg_temp = 0.0;       // eps schedule: sample positions from softmax(conf / alg_temp)
  uint64_t seed = 0;
  bool eos_stop = true;        // stop once the answer has ended, fill the rest with EOS
  // K/V caching (forwarder.h). kNone with kOff is the exact reference path (Model::forward over
  // the whole canvas every step).
  CacheMode cache = CacheMode::kNone;
  PromptReuse prompt_reuse = PromptReuse::kOff;  // applies where a PromptCache exists (Engine)
};

// Checks the combination of options (divisibility, ranges, algorithm vs schedule). Errors name
// the option.
base::Status validate(const DecodeOptions& options);

struct SpecialTokens {
  int32_t mask = -1;              // tokenizer.ggml.mask_token_id
  int32_t eos = -1;               // the filler after the end of the answer
  std::vector<int32_t> stop;      // tokens that end the answer (EOS, end-of-turn)
};

struct StepEvent {
  int64_t step = 0;                        // 1-based
  std::span<const int32_t> canvas;         // prompt followed by the answer region
  int64_t prompt_length = 0;
  std::span<const int32_t> committed;      // canvas positions committed in this step
};
using StepObserver = std::function<void(const StepEvent&)>;

struct DecodeResult {
  std::vector<int32_t> answer;   // gen_length tokens (EOS-filled after a stop)
  std::vector<int32_t> output;   // answer up to, not including, the first stop token
  int64_t steps = 0;
  int64_t forward_passes = 0;    // 2 per step with CFG
  bool stopped_by_eos = false;
  double forward_ms = 0;         // time inside the model
  double sampling_ms = 0;        // token choice, confidence and selection
  ForwardStats forward_stats;    // rows computed vs a full pass, prompt rows reused
};

// Decodes options.gen_length tokens after `prompt`. Errors: invalid options, token ids outside
// the vocabulary, a canvas longer than the model's context.
base::Result<DecodeResult> decode(const Model& model, kernels::ThreadPool& pool, ForwardState& state,
                                  std::span<const int32_t> prompt, const DecodeOptions& options,
                                  const SpecialTokens& special, const StepObserver& observer = {});

// The same with the passes going through `forwarder` (caches, batching). options.cache and
// options.prompt_reuse are the forwarder's business here: they are not read.
base::Result<DecodeResult> decode(const Model& model, Forwarder& forwarder, std::span<const int32_t> prompt,
                                  const DecodeOptions& options, const SpecialTokens& special,
                                  const StepObserver& observer = {});

}  // namespace dloop::engine
