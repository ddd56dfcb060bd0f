// The decoding loop: block (LLaDA) and eps (Dream) schedules, threshold decoding, CFG and EOS
// stop, on top of Model::forward and PositionChooser. See decoding.h and SPEC.md.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "dloop/engine/decoding.h"
#include "dloop/engine/device.h"
#include "position_choice.h"
#include "rng.h"

namespace dloop::engine {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

struct Prediction {
  int64_t pos;
  detail::PositionChoice choice;
};

class Run {
 public:
  Run(const Model& model, Forwarder& forwarder, std::span<const int32_t> prompt, const DecodeOptions& options,
      const SpecialTokens& special, const StepObserver& observer)
      : model_(model), fwd_(forwarder), options_(options), special_(special), observer_(observer),
        chooser_(options, special.mask), rng_(options.seed) {
    // On an accelerator the token choice runs where the logits are, unless it needs the whole
    // distribution on the host (top-k/top-p filtering, CFG's mix of two passes).
    device_ = dynamic_cast<DeviceForwarder*>(&forwarder);
    if (options.top_k > 0 || options.top_p < 1.0 || options.cfg_scale > 0) device_ = nullptr;
    n_prompt_ = static_cast<int64_t>(prompt.size());
    canvas_.assign(prompt.begin(), prompt.end());
    canvas_.resize(prompt.size() + static_cast<size_t>(options.gen_length), special.mask);
  }

  base::Status block_schedule();
  base::Status eps_schedule();
  DecodeResult result() const;

 private:
  std::vector<int64_t> masked(int64_t lo, int64_t hi) const {
    std::vector<int64_t> out;
    for (int64_t p = lo; p < hi; ++p) if (canvas_[p] == special_.mask) out.push_back(p);
    return out;
  }
  base::Status predict(int64_t lo, int64_t hi, bool first_in_block, std::vector<Prediction>& out);
  void rows_for(const std::vector<int64_t>& positions);
  base::Status logits_for(const std::vector<int64_t>& positions, const PassHint& hint);
  base::Status device_predict(const std::vector<int64_t>& positions, const PassHint& hint,
                              std::vector<Prediction>& out);
  void commit(const std::vector<Prediction>& preds, const std::vector<size_t>& chosen);
  bool answer_ended() const;
  std::vector<size_t> select_top(const std::vector<Prediction>& preds, size_t k) const;
  std::vector<size_t> select_threshold(const std::vector<Prediction>& preds) const;
  std::vector<size_t> select_sampled(const std::vector<Prediction>& preds, size_t k);

  const Model& model_;
  Forwarder& fwd_;
  DeviceForwarder* device_ = nullptr;  // set: choices come from forward_choices()
  const DecodeOptions& options_;
  const SpecialTokens& special_;
  const StepObserver& observer_;
  detail::PositionChooser chooser_;
  detail::SplitMix64 rng_;
  int64_t n_prompt_ = 0;
  std::vector<int32_t> canvas_;   // [n_prompt + gen_length]
  std::vector<float> logits_;     // [n_positions x n_vocab] for the current step
  std::vector<float> uncond_;     // [n_positions x n_vocab] CFG unconditional logits
  std::vector<int32_t> rows_;     // logits rows wanted (after shift)
  std::vector<TokenChoice> choices_;  // device path: one per position
  int64_t steps_ = 0;
  int64_t passes_ = 0;
  bool stopped_ = false;
  double forward_ms_ = 0;
  double sampling_ms_ = 0;
};

void Run::rows_for(const std::vector<int64_t>& positions) {
  rows_.clear();
  for (int64_t p : positions) rows_.push_back(static_cast<int32_t>(model_.config().shift_logits ? std::max<int64_t>(p - 1, 0) : p));
}

base::Status Run::logits_for(const std::vector<int64_t>& positions, const PassHint& hint) {
  const int64_t V = model_.config().n_vocab;
  rows_for(positions);
  logits_.resize(positions.size() * static_cast<size_t>(V));
  auto t0 = Clock::now();
  DLOOP_RETURN_IF_ERROR(fwd_.forward(canvas_, rows_, logits_.data(), hint, 0));
  ++passes_;
  if (options_.cfg_scale > 0) {
    std::vector<int32_t> uncond_canvas = canvas_;
    std::fill(uncond_canvas.begin(), uncond_canvas.begin() + n_prompt_, special_.mask);
    uncond_.resize(logits_.size());
    DLOOP_RETURN_IF_ERROR(fwd_.forward(uncond_canvas, rows_, uncond_.data(), hint, 1));
    ++passes_;
    const float s = static_cast<float>(options_.cfg_scale);
    for (size_t i = 0; i < logits_.size(); ++i) logits_[i] = uncond_[i] + (s + 1.0f) * (logits_[i] - uncond_[i]);
  }
  forward_ms_ += ms_since(t0);
  return base::Status();
}

// The same predictions as the host path, from 16 bytes a position: the random generator
// advances by exactly the draws the host path would make (V Gumbel uniforms per position when
// sampling, then the random algorithm's one), so a seed gives the same stream on either path.
base::Status Run::device_predict(const std::vector<int64_t>& positions, const PassHint& hint,
                                 std::vector<Prediction>& out) {
  const int64_t V = model_.config().n_vocab;
  const uint64_t gumbel = options_.temperature > 0 ? static_cast<uint64_t>(V) : 0;
  const bool random = options_.algorithm == Algorithm::kRandom;
  rows_for(positions);
  choices_.resize(positions.size());
  ChoiceOptions co;
  co.exclude = special_.mask;
  co.temperature = options_.temperature;
  co.rng_state = rng_.state();
  co.draws_per_row = static_cast<int64_t>(gumbel) + (random ? 1 : 0);
  auto t0 = Clock::now();
  DLOOP_RETURN_IF_ERROR(device_->forward_choices(canvas_, rows_, co, choices_.data(), hint, 0));
  ++passes_;
  forward_ms_ += ms_since(t0);
  ++steps_;
  t0 = Clock::now();
  out.clear();
  for (size_t i = 0; i < positions.size(); ++i) {
    const TokenChoice& c = choices_[i];
    detail::PositionChoice pc;
    pc.token = c.token < 0 ? 0 : c.token;
    rng_.skip(gumbel);
    switch (options_.algorithm) {
      case Algorithm::kRandom: pc.confidence = rng_.uniform(); break;
      case Algorithm::kOrigin: break;
      case Algorithm::kLowConfidence: pc.confidence = c.confidence; break;
      case Algorithm::kTopkMargin: pc.confidence = c.margin; break;
      case Algorithm::kEntropy: pc.confidence = -static_cast<double>(c.entropy); break;
    }
    out.push_back({positions[i], pc});
  }
  sampling_ms_ += ms_since(t0);
  return base::Status();
}

base::Status Run::predict(int64_t lo, int64_t hi, bool first_in_block, std::vector<Prediction>& out) {
  std::vector<int64_t> positions = masked(lo, hi);
  // Rows before the block and (dual cache) after it keep their tokens until the next block.
  const PassHint hint{lo, hi < static_cast<int64_t>(canvas_.size()) ? hi : -1, first_in_block};
  if (device_ != nullptr) return device_predict(positions, hint, out);
  DLOOP_RETURN_IF_ERROR(logits_for(positions, hint));
  ++steps_;
  auto t0 = Clock::now();
  const int64_t V = model_.config().n_vocab;
  out.clear();
  for (size_t i = 0; i < positions.size(); ++i) {
    out.push_back({positions[i], chooser_.choose(logits_.data() + i * static_cast<size_t>(V), V, rng_)});
  }
  sampling_ms_ += ms_since(t0);
  return base::Status();
}

std::vector<size_t> Run::select_top(const std::vector<Prediction>& preds, size_t k) const {
  std::vector<size_t> idx(preds.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    if (preds[a].choice.confidence != preds[b].choice.confidence) return preds[a].choice.confidence > preds[b].choice.confidence;
    return preds[a].pos < preds[b].pos;
  });
  idx.resize(std::min(k, idx.size()));
  return idx;
}

std::vector<size_t> Run::select_threshold(const std::vector<Prediction>& preds) const {
  std::vector<size_t> chosen;
  for (size_t i = 0; i < preds.size(); ++i) {
    if (preds[i].choice.confidence >= *options_.threshold) chosen.push_back(i);
  }
  return chosen.empty() ? select_top(preds, 1) : chosen;
}

std::vector<size_t> Run::select_sampled(const std::vector<Prediction>& preds, size_t k) {
  std::vector<size_t> cands(preds.size()), chosen;
  for (size_t i = 0; i < cands.size(); ++i) cands[i] = i;  // canvas order
  std::vector<double> csum;
  while (chosen.size() < k && !cands.empty()) {
    double mx = -INFINITY;
    for (size_t c : cands) mx = std::max(mx, preds[c].choice.confidence / options_.alg_temp);
    csum.clear();
    double total = 0;
    for (size_t c : cands) {
      total += std::exp(preds[c].choice.confidence / options_.alg_temp - mx);
      csum.push_back(total);
    }
    double target = rng_.uniform() * total;
    size_t at = static_cast<size_t>(std::upper_bound(csum.begin(), csum.end(), target) - csum.begin());
    at = std::min(at, cands.size() - 1);
    chosen.push_back(cands[at]);
    cands.erase(cands.begin() + static_cast<long>(at));
  }
  return chosen;
}

bool Run::answer_ended() const {
  for (size_t p = static_cast<size_t>(n_prompt_); p < canvas_.size(); ++p) {
    if (canvas_[p] == special_.mask) return false;
    if (std::find(special_.stop.begin(), special_.stop.end(), canvas_[p]) != special_.stop.end()) return true;
  }
  return false;
}

void Run::commit(const std::vector<Prediction>& preds, const std::vector<size_t>& chosen) {
  std::vector<int32_t> committed;
  for (size_t i : chosen) {
    canvas_[static_cast<size_t>(preds[i].pos)] = preds[i].choice.token;
    committed.push_back(static_cast<int32_t>(preds[i].pos));
  }
  if (options_.eos_stop && answer_ended()) stopped_ = true;
  if (observer_) observer_(StepEvent{steps_, canvas_, n_prompt_, committed});
}

base::Status Run::block_schedule() {
  const int64_t bl = options_.block_length > 0 ? options_.block_length : options_.gen_length;
  const int64_t n_blocks = options_.gen_length / bl;
  std::vector<Prediction> preds;
  for (int64_t b = 0; b < n_blocks && !stopped_; ++b) {
    const int64_t lo = n_prompt_ + b * bl, hi = lo + bl;
    const int64_t steps_per_block = options_.steps / n_blocks;
    const auto m = static_cast<int64_t>(masked(lo, hi).size());
    for (int64_t j = 0; !stopped_ && !masked(lo, hi).empty(); ++j) {
      if (!options_.threshold && j >= steps_per_block) break;
      DLOOP_RETURN_IF_ERROR(predict(lo, hi, j == 0, preds));
      auto t0 = Clock::now();
      std::vector<size_t> chosen;
      if (options_.threshold) {
        chosen = select_threshold(preds);
      } else {
        const int64_t count = m / steps_per_block + (j < m % steps_per_block ? 1 : 0);
        chosen = select_top(preds, static_cast<size_t>(count));
      }
      sampling_ms_ += ms_since(t0);
      commit(preds, chosen);
    }
  }
  return base::Status();
}

base::Status Run::eps_schedule() {
  const int64_t lo = n_prompt_, hi = static_cast<int64_t>(canvas_.size());
  auto t_of = [&](int64_t i) {
    return 1.0 - static_cast<double>(i) * (1.0 - options_.eps) / static_cast<double>(options_.steps);
  };
  std::vector<Prediction> preds;
  for (int64_t i = 0; i < options_.steps; ++i) {
    const auto n = static_cast<int64_t>(masked(lo, hi).size());
    if (n == 0 || stopped_) break;
    const bool last = i == options_.steps - 1;
    const double ratio = last ? 1.0 : 1.0 - t_of(i + 1) / t_of(i);
    DLOOP_RETURN_IF_ERROR(predict(lo, hi, i == 0, preds));
    auto t0 = Clock::now();
    std::vector<size_t> chosen;
    if (options_.algorithm == Algorithm::kOrigin) {
      for (size_t k = 0; k < preds.size(); ++k) {
        if (rng_.uniform() < ratio) chosen.push_back(k);
      }
    } else {
      const auto k = static_cast<size_t>(last ? n : static_cast<int64_t>(std::floor(static_cast<double>(n) * ratio)));
      chosen = options_.alg_temp > 0 ? select_sampled(preds, k) : select_top(preds, k);
    }
    sampling_ms_ += ms_since(t0);
    commit(preds, chosen);
  }
  return base::Status();
}

DecodeResult Run::result() const {
  DecodeResult r;
  for (size_t p = static_cast<size_t>(n_prompt_); p < canvas_.size(); ++p) {
    r.answer.push_back(stopped_ && canvas_[p] == special_.mask ? special_.eos : canvas_[p]);
  }
  for (int32_t t : r.answer) {
    if (std::find(special_.stop.begin(), special_.stop.end(), t) != special_.stop.end()) break;
    r.output.push_back(t);
  }
  r.steps = steps_;
  r.forward_passes = passes_;
  r.stopped_by_eos = stopped_;
  r.forward_ms = forward_ms_;
  r.sampling_ms = sampling_ms_;
  r.forward_stats = fwd_.stats();
  return r;
}

base::Status check_decode(const Model& model, std::span<const int32_t> prompt, const DecodeOptions& options,
                          const SpecialTokens& special) {
  DLOOP_RETURN_IF_ERROR(validate(options));
  const ModelConfig& c = model.config();
  if (special.mask < 0 || special.mask >= c.n_vocab) {
    return base::invalid_argument("the model has no mask token (tokenizer.ggml.mask_token_id)");
  }
  if (special.eos < 0 || special.eos >= c.n_vocab) return base::invalid_argument("the model has no EOS token");
  if (prompt.empty()) return base::invalid_argument("the prompt is empty");
  const auto canvas = static_cast<int64_t>(prompt.size()) + options.gen_length;
  if (canvas > c.n_ctx) {
    return base::invalid_argument("prompt (" + std::to_string(prompt.size()) + " tokens) plus gen_length (" +
                                  std::to_string(options.gen_length) + ") exceeds the model's context length " +
                                  std::to_string(c.n_ctx));
  }
  return base::Status();
}

}  // namespace

base::Result<DecodeResult> decode(const Model& model, Forwarder& forwarder, std::span<const int32_t> prompt,
                                  const DecodeOptions& options, const SpecialTokens& special,
                                  const StepObserver& observer) {
  DLOOP_RETURN_IF_ERROR(check_decode(model, prompt, options, special));
  Run run(model, forwarder, prompt, options, special, observer);
  DLOOP_RETURN_IF_ERROR(options.schedule == Schedule::kBlock ? run.block_schedule() : run.eps_schedule());
  return run.result();
}

base::Result<DecodeResult> decode(const Model& model, kernels::ThreadPool& pool, ForwardState& state,
                                  std::span<const int32_t> prompt, const DecodeOptions& options,
                                  const SpecialTokens& special, const StepObserver& observer) {
  if (options.cache == CacheMode::kNone) {
    DirectForwarder direct(model, pool, state);
    return decode(model, direct, prompt, options, special, observer);
  }
  DirectExecutor exec(model, pool);
  CachedForwarder cached(model, exec, CacheOptions{options.cache, nullptr, {}});
  return decode(model, cached, prompt, options, special, observer);
}

}  // namespace dloop::engine
