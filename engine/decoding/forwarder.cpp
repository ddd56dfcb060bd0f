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

base::Status check_rows(std::span<const int32_t> rows, int64_t t, int64_t* min_row, int64_t* max_row) {
  *min_row = t;
  *max_row = -1;
  for (int32_t r : rows) {
    if (r < 0 || r >= t) return base::invalid_argument("forward: logits row " + std::to_string(r) + " out of range");
    *min_row = std::min<int64_t>(*min_row, r);
    *max_row = std::max<int64_t>(*max_row, r);
  }
  return base::Status();
}

bool CachedCanvas::same(std::span<const int32_t> canvas, int64_t lo, int64_t hi) const {
  if (hi > static_cast<int64_t>(ref.size()) || hi > static_cast<int64_t>(canvas.size())) return false;
  return std::equal(canvas.begin() + lo, canvas.begin() + hi, ref.begin() + lo);
}

void CachedCanvas::check_frozen(std::span<const int32_t> canvas, int64_t min_row) {
  if (frozen > 0 && (!same(canvas, 0, frozen) || min_row < frozen)) {
    frozen = 0;
    valid = false;
  }
}

PassRows CachedCanvas::select(CacheMode mode, const PassHint& hint, std::span<const int32_t> canvas, int64_t min_row,
                              int64_t max_row) const {
  const auto t = static_cast<int64_t>(canvas.size());
  PassRows p{frozen, t, mode == CacheMode::kNone || hint.refresh || !valid};
  if (!p.full) {
    p.lo = std::max(frozen, std::min(hint.stable_end, min_row));
    if (!same(canvas, frozen, p.lo)) {
      p.full = true;
      p.lo = frozen;
    }
  }
  if (!p.full && mode == CacheMode::kDual && hint.live_end > 0 && t == static_cast<int64_t>(ref.size())) {
    const int64_t end = std::max(hint.live_end, max_row + 1);
    if (end < t && same(canvas, end, t)) p.hi = end;
  }
  return p;
}

void CachedCanvas::computed(std::span<const int32_t> canvas, const PassRows& rows) {
  if (rows.full) {
    ref.assign(canvas.begin(), canvas.end());
  } else {
    ref.resize(canvas.size());
    std::copy(canvas.begin() + rows.lo, canvas.begin() + rows.hi, ref.begin() + rows.lo);
  }
  valid = true;
}

base::Result<int64_t> prepare_prompt_segments(PromptCache& cache, std::string_view space,
                                              std::span<const int32_t> canvas,
                                              std::span<const int64_t> segment_ends, int64_t limit,
                                              const PromptSegmentOps& ops, ForwardStats& stats) {
  std::vector<int64_t> ends;
  for (int64_t e : segment_ends) if (e > 0 && e <= limit) ends.push_back(e);
  if (ends.empty()) return int64_t{0};
  auto [hit, rows] = cache.find_longest(canvas, ends, space);
  int64_t done = 0;
  if (hit >= 0) {
    done = ends[static_cast<size_t>(hit)];
    DLOOP_RETURN_IF_ERROR(ops.reuse(*rows, done));
    stats.prompt_rows_reused += done;
  }
  for (size_t i = static_cast<size_t>(hit + 1); i < ends.size(); ++i) {
    DLOOP_RETURN_IF_ERROR(ops.compute(done, ends[i]));
    stats.rows_computed += ends[i] - done;
    DLOOP_ASSIGN_OR_RETURN(auto entry, ops.snapshot(ends[i]));
    cache.insert(canvas.first(static_cast<size_t>(ends[i])), std::move(entry), space);
    cache.note_computed(ends[i] - done);
    done = ends[i];
  }
  return done;
}

base::Status CachedForwarder::prepare_prompt(std::span<const int32_t> canvas, int64_t limit, Stream& st) {
  PromptSegmentOps ops;
  ops.reuse = [&](const PromptRows& entry, int64_t n) {
    st.kv.copy_rows_from(static_cast<const HostPromptRows&>(entry).kv, n);
    return base::Status();
  };
  ops.compute = [&](int64_t lo, int64_t hi) {
    SequencePass pass;
    pass.canvas = canvas;
    pass.lo = lo;
    pass.hi = pass.kv_end = hi;
    pass.kv = &st.kv;
    return exec_.run(pass);
  };
  ops.snapshot = [&](int64_t n) -> base::Result<std::shared_ptr<const PromptRows>> {
    auto entry = std::make_shared<HostPromptRows>();
    entry->kv.reserve(model_.config(), n);
    entry->kv.copy_rows_from(st.kv, n);
    return std::shared_ptr<const PromptRows>(std::move(entry));
  };
  DLOOP_ASSIGN_OR_RETURN(st.cached.frozen, prepare_prompt_segments(*options_.prompt_cache, {}, canvas,
                                                                   options_.segment_ends, limit, ops, stats_));
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
  int64_t min_row = 0, max_row = 0;
  DLOOP_RETURN_IF_ERROR(check_rows(rows, t, &min_row, &max_row));
  // The prompt segments: once per request, on the conditional stream.
  if (stream == 0 && !prompt_done_) {
    prompt_done_ = true;
    if (options_.prompt_cache != nullptr && !options_.segment_ends.empty()) {
      const int64_t limit = std::min({min_row, std::max<int64_t>(hint.stable_end, 0), t - 1});
      DLOOP_RETURN_IF_ERROR(prepare_prompt(canvas, limit, st));
      st.cached.ref.assign(canvas.begin(), canvas.begin() + st.cached.frozen);
    }
  }
  st.cached.check_frozen(canvas, min_row);
  const PassRows sel = st.cached.select(options_.mode, hint, canvas, min_row, max_row);
  if (sel.lo >= sel.hi) {  // nothing changed and no logits wanted below lo
    if (!rows.empty()) return base::internal_error("forward: logits rows inside the cached prefix");
    return base::Status();
  }
  SequencePass pass;
  pass.canvas = canvas;
  pass.lo = sel.lo;
  pass.hi = sel.hi;
  pass.kv_end = t;
  pass.kv = &st.kv;
  pass.rows = rows;
  pass.logits = logits;
  st.cached.valid = false;  // K/V rows are being overwritten: invalid until the pass succeeds
  DLOOP_RETURN_IF_ERROR(exec_.run(pass));
  ++stats_.passes;
  if (sel.full) ++stats_.refreshes;
  stats_.rows_computed += sel.hi - sel.lo;
  stats_.rows_canvas += t;
  st.cached.computed(canvas, sel);
  return base::Status();
}

}  // namespace dloop::engine
