// How a decoder gets its logits: a Forwarder turns "logits of these rows of this canvas" into
// model work. DirectForwarder is the plain full-canvas Model::forward (the reference; what the
// golden tests check). CachedForwarder keeps the K/V of every canvas position between passes and
// recomputes only the rows the caller's PassHint says may have changed:
//  - prefix cache (Fast-dLLM PrefixCache): a refresh pass at the start of each block computes
//    every row; the block's later steps recompute [block start, end) against the cached K/V of
//    the rows before the block;
//  - dual cache (Fast-dLLM DualCache): the later steps recompute only the block, reading the
//    cached K/V of the prefix and of the suffix after the block;
//  - prompt reuse: the prompt is cut into segments after each end-of-turn token; a segment's K/V
//    are computed once attending to itself and the segments before it (never to what follows),
//    and kept in the Engine's PromptCache (an LRU keyed by the token prefix) across requests, so
//    an agent run's system prompt and tool schemas are computed once per run. Because a
//    segment's K/V never depend on what follows it, results do not depend on the cache's state:
//    a hit gives bit-identical output to a miss.
// For bidirectional models the caches are approximations (the cached rows would have changed);
// measured effects are in docs/performance.md. Passes go through a PassExecutor: alone
// (DirectExecutor) or batched with other requests (BatchCoordinator, batch.h).
// Thread-safety: a Forwarder belongs to one request; the executor decides what may be shared.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "dloop/base/status.h"
#include "dloop/engine/forward_batch.h"
#include "dloop/engine/model.h"

namespace dloop::engine {

class PromptCache;
class PromptRows;

enum class CacheMode { kNone, kPrefix, kDual };
std::optional<CacheMode> parse_cache_mode(std::string_view name);  // none|off, prefix, dual
const char* cache_mode_name(CacheMode mode);

// Which prompt segments are computed on their own and kept across requests.
enum class PromptReuse {
  kOff,     // the prompt is part of the canvas like everything else
  kSystem,  // the first turn (the system message: instructions and tool schemas)
  kTurns,   // every complete turn before the generation prompt
};
std::optional<PromptReuse> parse_prompt_reuse(std::string_view name);  // off, system, turns
const char* prompt_reuse_name(PromptReuse reuse);

// What the caller knows about the canvas of a pass, relative to the last refresh pass.
struct PassHint {
  int64_t stable_end = 0;  // positions [0, stable_end) hold the same tokens as at the last refresh
  int64_t live_end = -1;   // dual cache: positions [live_end, end) too (-1: no such suffix)
  bool refresh = false;    // recompute every position (the first pass of a block)
};

struct ForwardStats {
  int64_t passes = 0;
  int64_t refreshes = 0;      // passes that recomputed the whole live canvas
  int64_t rows_computed = 0;  // canvas rows run through the layers
  int64_t rows_canvas = 0;    // canvas rows a full pass would have run
  int64_t prompt_rows_reused = 0;  // rows taken from the PromptCache
};

class Forwarder {
 public:
  virtual ~Forwarder() = default;
  // Writes the logits of the model rows `rows` (already shifted for shift_logits models) of
  // `canvas` to logits[rows.size() x n_vocab]. `stream` names an independent canvas of the same
  // request (classifier-free guidance's unconditional pass is stream 1). Errors: invalid tokens
  // or rows (naming the position), a canvas over the model's context.
  virtual base::Status forward(std::span<const int32_t> canvas, std::span<const int32_t> rows, float* logits,
                               const PassHint& hint, int stream = 0) = 0;
  const ForwardStats& stats() const { return stats_; }

 protected:
  ForwardStats stats_;
};

// Model::forward over the whole canvas every pass; ignores hints.
class DirectForwarder final : public Forwarder {
 public:
  DirectForwarder(const Model& model, kernels::ThreadPool& pool, ForwardState& state)
      : model_(model), pool_(pool), state_(state) {}
  base::Status forward(std::span<const int32_t> canvas, std::span<const int32_t> rows, float* logits,
                       const PassHint& hint, int stream = 0) override;

 private:
  const Model& model_;
  kernels::ThreadPool& pool_;
  ForwardState& state_;
};

class DeviceBatch;  // device.h

// Runs one SequencePass (alone, or as part of a batch).
class PassExecutor {
 public:
  virtual ~PassExecutor() = default;
  virtual base::Status run(SequencePass& pass) = 0;
  // The device batch a request's device passes go to (DeviceBatchMember, device.h), or null.
  virtual DeviceBatch* device_batch() { return nullptr; }
};

class DirectExecutor final : public PassExecutor {
 public:
  DirectExecutor(const Model& model, kernels::ThreadPool& pool) : model_(model), pool_(pool) {}
  base::Status run(SequencePass& pass) override;

 private:
  const Model& model_;
  kernels::ThreadPool& pool_;
  BatchState state_;
};

// The row selection shared by CachedForwarder and the device forwarders (device.h).
// check_rows: every row in [0, t); their least and greatest (t and -1 when there are none).
base::Status check_rows(std::span<const int32_t> rows, int64_t t, int64_t* min_row, int64_t* max_row);

struct PassRows {
  int64_t lo = 0;     // the rows a pass recomputes: [lo, hi)
  int64_t hi = 0;
  bool full = true;   // everything from the frozen rows on
};

// What a cached forwarder knows of one stream's cached K/V rows.
struct CachedCanvas {
  std::vector<int32_t> ref;  // the canvas the cached rows were computed from
  bool valid = false;
  int64_t frozen = 0;        // rows [0, frozen) are prompt segments (never recomputed)

  // Forgets the frozen rows when the canvas no longer starts with them or a wanted row is inside.
  void check_frozen(std::span<const int32_t> canvas, int64_t min_row);
  // The rows the next pass must compute for the hint and the rows wanted [min_row, max_row].
  PassRows select(CacheMode mode, const PassHint& hint, std::span<const int32_t> canvas, int64_t min_row,
                  int64_t max_row) const;
  // Records a successful pass over `rows` of `canvas`.
  void computed(std::span<const int32_t> canvas, const PassRows& rows);
  bool same(std::span<const int32_t> canvas, int64_t lo, int64_t hi) const;  // canvas[lo, hi) == ref[lo, hi)
};

// Prompt reuse, shared by CachedForwarder and the device forwarders: the prompt segments of
// `canvas` ending at `segment_ends` (those <= limit) come from `cache` (key space `space`) as far
// as it holds them, through reuse(entry, n) (copy rows [0, n) of an entry into the request's K/V);
// the rest are computed one after another by compute(lo, hi) (rows [lo, hi) attending to [0, hi))
// and stored as snapshot(n) (a new entry holding the request's rows [0, n)). Returns how many
// prompt rows are done (to be frozen); counts rows reused and computed in `stats`.
struct PromptSegmentOps {
  std::function<base::Status(const PromptRows& entry, int64_t n)> reuse;
  std::function<base::Status(int64_t lo, int64_t hi)> compute;
  std::function<base::Result<std::shared_ptr<const PromptRows>>(int64_t n)> snapshot;
};
base::Result<int64_t> prepare_prompt_segments(PromptCache& cache, std::string_view space,
                                              std::span<const int32_t> canvas,
                                              std::span<const int64_t> segment_ends, int64_t limit,
                                              const PromptSegmentOps& ops, ForwardStats& stats);

struct CacheOptions {
  CacheMode mode = CacheMode::kNone;
  PromptCache* prompt_cache = nullptr;  // prompt reuse when set and segment_ends is not empty
  std::vector<int64_t> segment_ends;    // ascending prompt positions after each reusable segment
};

class CachedForwarder final : public Forwarder {
 public:
  CachedForwarder(const Model& model, PassExecutor& exec, CacheOptions options)
      : model_(model), exec_(exec), options_(std::move(options)) {}
  base::Status forward(std::span<const int32_t> canvas, std::span<const int32_t> rows, float* logits,
                       const PassHint& hint, int stream = 0) override;

 private:
  struct Stream {
    KvRows kv;
    CachedCanvas cached;
  };
  base::Status prepare_prompt(std::span<const int32_t> canvas, int64_t limit, Stream& st);

  const Model& model_;
  PassExecutor& exec_;
  CacheOptions options_;
  Stream streams_[2];
  bool prompt_done_ = false;
};

// Positions just after each end-of-turn token in `prompt` (kSystem: the first one only), kept
// below prompt.size() - 1 so the rows a decoder reads stay live.
std::vector<int64_t> prompt_segment_ends(std::span<const int32_t> prompt, std::span<const int32_t> turn_end_tokens,
                                         PromptReuse reuse);

}  // namespace dloop::engine
