// The rows of the state database as plain C++ values: runs, steps, events and KV entries, the
// event type names, and their JSON forms (used by `dloop runs --json`, the HTTP runs API and
// trace export). docs/state.md is the reference for every column and payload field.
// Plain values: not thread-safe to mutate concurrently, safe to copy between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dloop/base/json.h"

namespace dloop::memory {

// Event type names. The log accepts any snake_case type (a newer writer may add some); these are
// the ones the store understands when it maintains the derived runs and steps rows.
namespace event_type {
constexpr std::string_view kRunStarted = "run_started";      // written by Store::create_run only
constexpr std::string_view kRunResumed = "run_resumed";      // a finished or interrupted run continues
constexpr std::string_view kStepStarted = "step_started";
constexpr std::string_view kModelCall = "model_call";        // a model request and its output
constexpr std::string_view kToolCall = "tool_call";          // the call the model (or a tool step) made
constexpr std::string_view kToolResult = "tool_result";      // the tool's result or error
constexpr std::string_view kStepCompleted = "step_completed";
constexpr std::string_view kStepFailed = "step_failed";
constexpr std::string_view kStepSkipped = "step_skipped";
constexpr std::string_view kRunCompleted = "run_completed";
constexpr std::string_view kRunFailed = "run_failed";
constexpr std::string_view kRunCancelled = "run_cancelled";
}  // namespace event_type

enum class RunStatus { kRunning, kCompleted, kFailed, kCancelled };
enum class StepStatus { kRunning, kCompleted, kFailed, kSkipped };

const char* run_status_name(RunStatus s);    // "running", "completed", "failed", "cancelled"
const char* step_status_name(StepStatus s);  // "running", "completed", "failed", "skipped"
std::optional<RunStatus> parse_run_status(std::string_view text);
std::optional<StepStatus> parse_step_status(std::string_view text);

// What create_run needs. An empty id asks the store for a fresh sortable one.
struct NewRun {
  std::string workflow;       // the workflow's `name:` (required)
  std::string workflow_path;  // the file it was loaded from, as given
  std::string workflow_hash;  // e.g. "sha256:..." of the file text; resume checks it
  base::Json inputs = base::Json::object();
  std::string id;             // optional: [A-Za-z0-9._-]{1,128}
  // The values of the workflow's `env:` names as the run saw them ({NAME: value or null}), and the
  // names marked secret (redacted by trace export). Null/empty: not recorded (older writers).
  base::Json env;
  std::vector<std::string> secret_env;
};

struct Run {
  std::string id;
  std::string workflow;
  std::string workflow_path;
  std::string workflow_hash;
  base::Json inputs;
  RunStatus status = RunStatus::kRunning;
  base::Json outputs;         // null until run_completed
  std::string error;          // "" unless failed or cancelled
  std::string created_at;     // ISO-8601 UTC with milliseconds: 2026-12-02T13:28:50.123Z
  std::string updated_at;
  int64_t last_seq = 0;       // seq of the newest event (= the number of events)
};

// An event as a writer hands it to the store; seq, ordinal and timestamp are assigned on commit.
struct NewEvent {
  std::string type;           // snake_case; see event_type
  std::string step_path;      // "" for run-level events; e.g. "classify", "review[2]/summarize"
  int64_t attempt = 0;        // the step's retry attempt, 1-based; 0 when not applicable
  int64_t turn = 0;           // the agent turn, 1-based; 0 when not applicable
  base::Json payload = base::Json::object();
};

// An event as stored. (run_id, seq) is its key; (run_id, step_path, attempt, type, ordinal) is
// unique too and is what resume looks up.
struct Event {
  std::string run_id;
  int64_t seq = 0;            // 1-based, gap-free per run
  std::string type;
  std::string step_path;
  int64_t attempt = 0;
  int64_t turn = 0;
  int64_t ordinal = 0;        // 0-based count of earlier events with the same step_path, attempt, type
  base::Json payload;
  std::string ts;             // ISO-8601 UTC, milliseconds
};

// The derived per-step row (one per run and step path), maintained from the step's events.
struct StepRecord {
  std::string run_id;
  std::string step_path;
  StepStatus status = StepStatus::kRunning;
  int64_t attempts = 0;       // the highest attempt seen
  base::Json output;          // step_completed's payload.output; null otherwise
  std::string error;          // step_failed's error message
  std::string started_at;     // "" when unknown
  std::string ended_at;       // "" while running
  int64_t first_seq = 0;
  int64_t last_seq = 0;
};

struct KvEntry {
  std::string key;
  base::Json value;
  std::string updated_at;
};

base::Json to_json(const Run& run);
base::Json to_json(const StepRecord& step);
base::Json to_json(const Event& event);

}  // namespace dloop::memory
