// DirectForwarder, DirectExecutor and CachedForwarder's row selection; see forwarder.h.
#include "dloop/engine/forwarder.h"

#include <algorithm>
#include <memory>

#include "dloop/engine/prompt_cache.h"

namespace dloop::engine {

std::optional<CacheMode> parse_cache_mode(std::string_view name) {
  if (name == "none" || name == "off") return CacheMode::kNone;
  if (name == "prefix") return CacheMode::kPrefix;
  if (name == "dual") return CacheMode::kDual;
  return std::nullopt;
}

const char* cache_mode_name(CacheMode mode) {
  switch (mode) {
    case CacheMode::kNone: return "none";
    case CacheMode::kPrefix: return "prefix";
    case CacheMode::kDual: return "dual";
  }
  return "?";
}

std::optional<PromptReuse> parse_prompt_reuse(std::string_view name) {
  if (name == "off" || name == "none") return PromptReuse::kOff;
  if (name == "system") return PromptReuse::kSystem;
  if (name == "turns") return PromptReuse::kTurns;
  return std::nullopt;
}

const char* prompt_reuse_name(PromptReuse reuse) {
  switch (reuse) {
    case PromptReuse::kOff: return "off";
    case PromptReuse::kSystem: return "system";
    case PromptReuse::kTurns: return "turns";
  }
  return "?";
}

std::vector<int64_t> prompt_segment_ends(std::span<const int32_t> prompt, std::span<const int32_t> turn_end_tokens,
                                         PromptReuse reuse) {
  std::vector<int64_t> ends;
  if (reuse == PromptReuse::kOff) return ends;
  const auto limit = static_cast<int64_t>(prompt.size()) - 1;
  for (int64_t i = 0; i < limit; ++i) {
    if (std::find(turn_end_tokens.begin(), turn_end_tokens.end(), prompt[i]) == turn_end_tokens.end()) continue;
    ends.push_back(i + 1);
    if (reuse == PromptReuse::kSystem) break;
  }
  return ends;
}

base::Status DirectForwarder::forward(std::span<const int32_t> canvas, std::span<const int32_t> rows, float* logits,
                                      const PassHint&, int) {
  const auto t = static_cast<int64_t>(canvas.size());
  if (t > model_.config().n_ctx) {
    return base::invalid_argument("canvas of " + std::to_string(t) + " tokens exceeds the model's context length " +
                                  std::to_string(model_.config().n_ctx));
  }
  DLOOP_RETURN_IF_ERROR(model_.forward(pool_, canvas, rows, logits, state_));
  ++stats_.passes;
  ++stats_.refreshes;
  stats_.rows_computed += t;
  stats_.rows_canvas += t;
  return base::Status();
}

base::Status DirectExecutor::run(SequencePass& pass) {
  return forward_batch(model_, pool_, std::span<SequencePass>(&pass, 1), state_);
}

base::Status CachedForwarder::prepare_prompt(std::span<const int32_t> canvas, int64_t limit, Stream& st) {
  std::vector<int64_t> ends;
  for (int64_t e : options_.segment_ends) if (e > 0 && e <= limit) ends.push_back(e);
  if (ends.empty()) return base::Status();
  PromptCache& cache = *options_.prompt_cache;
  auto [hit, rows] = cache.find_longest(canvas, ends);
  int64_t done = 0;
  if (hit >= 0) {
    done = ends[static_cast<size_t>(hit)];
    st.kv.copy_rows_from(*rows, done);
    stats_.prompt_rows_reused += done;
  }
  for (size_t i = static_cast<size_t>(hit + 1); i < ends.size(); ++i) {
    SequencePass pass;
    pass.canvas = canvas;
    pass.lo = done;
    pass.hi = pass.kv_end = ends[i];
    pass.kv = &st.kv;
    DLOOP_RETURN_IF_ERROR(exec_.run(pass));
    stats_.rows_computed += pass.hi - pass.lo;
    auto entry = std::make_shared<KvRows>(model_.config(), ends[i]);
    entry->copy_rows_from(st.kv, ends[i]);
    cache.insert(canvas.first(static_cast<size_t>(ends[i])), std::move(entry));
    cache.note_computed(pass.hi - pass.lo);
    done = ends[i];
  }
  st.frozen = done;
  return base::Status();
}

base::Status CachedForwarder::forward(std::span<const int32_t> canvas, std::span<const int32_t> rows, float* logits,
                                      const PassHint& hint, int stream) {
  const ModelConfig& c = model_.config();
  const auto t = static_cast<int64_t>(canvas.size());
  if (t > c.n_ctx) {
    return base::invalid_argument("canvas of " + std::to_string(t) + " tokens exceeds the model's context length " +
                                  std::to_string(c.n_ctx));
  }
  if (t == 0) return base::invalid_argument("forward: empty canvas");
  if (stream < 0 || stream > 1) return base::invalid_argument("forward: stream must be 0 or 1");
  Stream& st = streams_[stream];
  st.kv.reserve(c, t);
  int64_t min_row = t, max_row = -1;
  for (int32_t r : rows) {
    if (r < 0 || r >= t) return base::invalid_argument("forward: logits row " + std::to_string(r) + " out of range");
    min_row = std::min<int64_t>(min_row, r);
    max_row = std::max<int64_t>(max_row, r);
  }
  // The prompt segments: once per request, on the conditional stream.
  if (stream == 0 && !prompt_done_) {
    prompt_done_ = true;
    if (options_.prompt_cache != nullptr && !options_.segment_ends.empty()) {
      const int64_t limit = std::min({min_row, std::max<int64_t>(hint.stable_end, 0), t - 1});
      DLOOP_RETURN_IF_ERROR(prepare_prompt(canvas, limit, st));
      st.ref.assign(canvas.begin(), canvas.begin() + st.frozen);
    }
  }
  // Frozen rows must still hold the tokens they were computed from.
  const auto same = [&](int64_t lo, int64_t hi) {
    if (hi > static_cast<int64_t>(st.ref.size()) || hi > t) return false;
    return std::equal(canvas.begin() + lo, canvas.begin() + hi, st.ref.begin() + lo);
  };
  if (st.frozen > 0 && (!same(0, st.frozen) || min_row < st.frozen)) {
    st.frozen = 0;
    st.valid = false;
  }
  const int64_t f = st.frozen;
  int64_t lo = f, hi = t;
  bool full = options_.mode == CacheMode::kNone || hint.refresh || !st.valid;
  if (!full) {
    lo = std::max(f, std::min(hint.stable_end, min_row));
    if (!same(f, lo)) {
      full = true;
      lo = f;
    }
  }
  if (!full && options_.mode == CacheMode::kDual && hint.live_end > 0 && t == static_cast<int64_t>(st.ref.size())) {
    const int64_t end = std::max(hint.live_end, max_row + 1);
    if (end < t && same(end, t)) hi = end;
  }
  if (lo >= hi) {  // nothing changed and no logits wanted below lo
    if (!rows.empty()) return base::internal_error("forward: logits rows inside the cached prefix");
    return base::Status();
  }
  SequencePass pass;
  pass.canvas = canvas;
  pass.lo = lo;
  pass.hi = hi;
  pass.kv_end = t;
  pass.kv = &st.kv;
  pass.rows = rows;
  pass.logits = logits;
  DLOOP_RETURN_IF_ERROR(exec_.run(pass));
  ++stats_.passes;
  if (full) ++stats_.refreshes;
  stats_.rows_computed += hi - lo;
  stats_.rows_canvas += t;
  if (full) {
    st.ref.assign(canvas.begin(), canvas.end());
  } else {
    st.ref.resize(static_cast<size_t>(t));
    std::copy(canvas.begin() + lo, canvas.begin() + hi, st.ref.begin() + lo);
  }
  st.valid = true;
  return base::Status();
}

}  // namespace dloop::engine
