// Status names and the JSON forms of runs, steps and events; see records.h.
#include "dloop/memory/records.h"

namespace dloop::memory {

using base::Json;

const char* run_status_name(RunStatus s) {
  switch (s) {
    case RunStatus::kRunning: return "running";
    case RunStatus::kCompleted: return "completed";
    case RunStatus::kFailed: return "failed";
    case RunStatus::kCancelled: return "cancelled";
  }
  return "running";
}

const char* step_status_name(StepStatus s) {
  switch (s) {
    case StepStatus::kRunning: return "running";
    case StepStatus::kCompleted: return "completed";
    case StepStatus::kFailed: return "failed";
    case StepStatus::kSkipped: return "skipped";
  }
  return "running";
}

std::optional<RunStatus> parse_run_status(std::string_view text) {
  for (RunStatus s : {RunStatus::kRunning, RunStatus::kCompleted, RunStatus::kFailed, RunStatus::kCancelled}) {
    if (text == run_status_name(s)) return s;
  }
  return std::nullopt;
}

std::optional<StepStatus> parse_step_status(std::string_view text) {
  for (StepStatus s : {StepStatus::kRunning, StepStatus::kCompleted, StepStatus::kFailed, StepStatus::kSkipped}) {
    if (text == step_status_name(s)) return s;
  }
  return std::nullopt;
}

Json to_json(const Run& run) {
  Json j = Json::object();
  j.set("id", run.id);
  j.set("workflow", run.workflow);
  j.set("workflow_path", run.workflow_path);
  j.set("workflow_hash", run.workflow_hash);
  j.set("status", run_status_name(run.status));
  j.set("inputs", run.inputs);
  j.set("outputs", run.outputs);
  j.set("error", run.error.empty() ? Json() : Json(run.error));
  j.set("created_at", run.created_at);
  j.set("updated_at", run.updated_at);
  j.set("events", run.last_seq);
  return j;
}

Json to_json(const StepRecord& step) {
  Json j = Json::object();
  j.set("step_path", step.step_path);
  j.set("status", step_status_name(step.status));
  j.set("attempts", step.attempts);
  j.set("output", step.output);
  j.set("error", step.error.empty() ? Json() : Json(step.error));
  j.set("started_at", step.started_at.empty() ? Json() : Json(step.started_at));
  j.set("ended_at", step.ended_at.empty() ? Json() : Json(step.ended_at));
  j.set("first_seq", step.first_seq);
  j.set("last_seq", step.last_seq);
  return j;
}

Json to_json(const Event& event) {
  Json j = Json::object();
  j.set("run_id", event.run_id);
  j.set("seq", event.seq);
  j.set("type", event.type);
  j.set("step_path", event.step_path);
  j.set("attempt", event.attempt);
  j.set("turn", event.turn);
  j.set("ordinal", event.ordinal);
  j.set("ts", event.ts);
  j.set("payload", event.payload);
  return j;
}

}  // namespace dloop::memory
