// ReplayLog: a recorded run (its runs row and events) handed to a re-execution of the workflow
// (RunRequest::replay). The executor runs the current workflow code for real (expressions, step
// order, conditions, loops, retries, the SQLite commits into a scratch store) but asks the
// ReplayLog instead of the model and the tools:
// - strict mode (`dloop replay`): every model call and tool call must be the one the record has at
//   the same place (step path, attempt, turn / ordinal); its recorded output or result is served.
//   The first place where the re-execution asks for something else, or where a step's outcome or
//   the run's outputs differ from the record, is a Divergence and the run stops there. Recorded
//   events the re-execution never reached are a divergence too.
// - live-model mode (`dloop replay --live-model`): the model is asked again; a tool call identical
//   to the recorded one at the same place reuses the recorded result, any other runs for real.
//   Nothing stops the run; each model call is listed with its old and new output and time.
// docs/traces.md describes the semantics and the report.
//
// Thread-safety: none. One ReplayLog serves one run, whose coroutines all run on one executor.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/memory/records.h"

namespace dloop::runtime {

// Where a re-execution first differs from its record.
struct Divergence {
  std::string step_path;  // "" for the run itself
  int64_t attempt = 0;
  int64_t turn = 0;       // agent turn, 0 when not a model or agent tool call
  std::string what;       // "model request", "tool call", "step output", "run outputs", ...
  std::string field;      // JSON path of the first difference inside `what` ("" = the whole value)
  std::string expected;   // what the record has (compact JSON or a phrase)
  std::string got;        // what the re-execution did
  // Multi-line human report: "divergence at step 'classify' (attempt 1, turn 2): model request\n ..."
  std::string report() const;
};

// One model call of a live-model replay.
struct LiveCall {
  std::string step_path;
  int64_t attempt = 0;
  int64_t turn = 0;
  base::Json recorded;   // the recorded output ({type: call|answer, ...}); null when the record has none
  base::Json got;        // the new output; null when the model failed
  std::string error;     // the model's error, if any
  double recorded_ms = -1;
  double new_ms = 0;
  bool same() const { return recorded == got; }
};

// The first JSON difference between `expected` and `got` below `path` ("" when equal): sets
// *where to the JSON path ("messages[2].content"), *a and *b to the two values as compact JSON.
bool first_difference(const base::Json& expected, const base::Json& got, const std::string& path,
                      std::string* where, std::string* a, std::string* b);

class ReplayLog {
 public:
  enum class Mode { kStrict, kLiveModel };
  ReplayLog(memory::Run run, std::vector<memory::Event> events, Mode mode);

  Mode mode() const { return mode_; }
  bool strict() const { return mode_ == Mode::kStrict; }
  const memory::Run& run() const { return run_; }
  const std::vector<memory::Event>& events() const { return events_; }
  // run_started's recorded `env` object (null for logs written before it was recorded).
  const base::Json& recorded_env() const { return env_; }
  const std::string& started_at() const { return started_at_; }

  // The recorded event at (step_path, attempt, type, ordinal), or nullptr; marks it reached.
  const memory::Event* take(const std::string& step_path, int64_t attempt, std::string_view type, int64_t ordinal);
  // The message of the recorded step_failed of (step_path, attempt) when its error code is `code`
  // (a run recorded without a working model failed its agent steps before any model call).
  std::optional<std::string> recorded_failure(const std::string& step_path, int64_t attempt,
                                              std::string_view code) const;
  // The next ordinal of (step_path, attempt, type) in the re-execution (counts every call).
  int64_t next_ordinal(const std::string& step_path, int64_t attempt, std::string_view type);

  // Strict mode: the first divergence is kept and stops the run; later ones are ignored.
  // Live mode: differences are collected as changes and nothing stops.
  void diverge(Divergence d);
  bool stopped() const { return strict() && divergence_.has_value(); }
  const std::optional<Divergence>& divergence() const { return divergence_; }
  const std::vector<Divergence>& changes() const { return changes_; }

  // Checks one event the re-execution is about to commit against the record (step and run
  // events; model and tool calls are checked when they are asked for).
  void check_event(const memory::NewEvent& e);
  // At the end: the run's outcome against the recorded one, then (strict) the first recorded
  // step, model or tool event the re-execution never reached.
  void check_finish(memory::RunStatus status, const base::Json& outputs, const std::string& error);

  std::vector<LiveCall> live_calls;
  int64_t model_calls_served = 0;  // recorded model outputs used
  int64_t tool_results_served = 0; // recorded tool results used
  int64_t tools_run_live = 0;      // live mode: tool calls that differed and ran for real

 private:
  using Key = std::tuple<std::string, int64_t, std::string, int64_t>;
  Mode mode_;
  memory::Run run_;
  std::vector<memory::Event> events_;
  base::Json env_;
  std::string started_at_;
  std::map<Key, size_t> index_;  // -> events_
  std::set<Key> reached_;
  std::map<std::tuple<std::string, int64_t, std::string>, int64_t> ordinals_;
  std::optional<Divergence> divergence_;
  std::vector<Divergence> changes_;
};

}  // namespace dloop::runtime
