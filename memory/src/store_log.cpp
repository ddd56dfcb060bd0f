// Store: the event log. Writers (create_run, commit, finish_run) assign seq and ordinal inside
// one IMMEDIATE transaction and keep the derived runs and steps rows in step with the events;
// readers (events, recorded) serve replay and resume.
#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "store_impl.h"

namespace dloop::memory {

using base::Json;
using base::Result;
using base::Status;

namespace {

constexpr size_t kMaxRunIdLength = 128;
constexpr size_t kMaxTypeLength = 64;

bool valid_run_id(const std::string& id) {
  if (id.empty() || id.size() > kMaxRunIdLength) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-';
    if (!ok) return false;
  }
  return true;
}

bool valid_type(const std::string& type) {
  if (type.empty() || type.size() > kMaxTypeLength || type[0] < 'a' || type[0] > 'z') return false;
  for (char c : type) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// "r-20261202-132850-7f3a9c12": sorts by creation time to the second; 32 random bits keep ids
// from one second apart.
std::string new_run_id(int64_t unix_ms, std::mt19937_64& rng) {
  std::string iso = detail::iso_time(unix_ms);  // 2026-12-02T13:28:50.123Z
  char buf[48];
  std::snprintf(buf, sizeof buf, "r-%.4s%.2s%.2s-%.2s%.2s%.2s-%08x", iso.c_str(), iso.c_str() + 5, iso.c_str() + 8,
                iso.c_str() + 11, iso.c_str() + 14, iso.c_str() + 17, static_cast<unsigned>(rng() & 0xffffffffu));
  return buf;
}

// The message of payload[key]: a string as is, {"message": ...} (with "code: " when present),
// anything else as compact JSON.
std::string error_text(const Json& payload, std::string_view key) {
  const Json* e = payload.find(key);
  if (e == nullptr || e->is_null()) return "";
  if (e->is_string()) return e->as_string();
  const Json* msg = e->find("message");
  if (msg != nullptr && msg->is_string()) {
    const Json* code = e->find("code");
    return code != nullptr && code->is_string() ? code->as_string() + ": " + msg->as_string() : msg->as_string();
  }
  return e->dump();
}

bool is_terminal(RunStatus s) { return s != RunStatus::kRunning; }

Status validate(const NewEvent& e) {
  if (!valid_type(e.type)) {
    return base::invalid_argument("event type '" + e.type + "' is not snake_case ([a-z][a-z0-9_]*, <= 64 bytes)");
  }
  if (e.type == event_type::kRunStarted) return base::invalid_argument("run_started is written by create_run only");
  if (e.attempt < 0 || e.turn < 0) return base::invalid_argument("event '" + e.type + "': negative attempt or turn");
  return Status();
}

Status insert_event(Store::Impl& impl, const std::string& run_id, int64_t seq, const NewEvent& e,
                    const std::string& ts) {
  int64_t ordinal = 0;
  {
    DLOOP_ASSIGN_OR_RETURN(auto s, impl.prepare("SELECT coalesce(max(ordinal) + 1, 0) FROM events WHERE run_id = ?1"
                                                " AND step_path = ?2 AND attempt = ?3 AND type = ?4",
                                                "appending events: ordinal"));
    s.bind(1, run_id).bind(2, e.step_path).bind(3, e.attempt).bind(4, e.type);
    DLOOP_ASSIGN_OR_RETURN(bool row, s.step());
    if (row) ordinal = s.int_at(0);
  }
  DLOOP_ASSIGN_OR_RETURN(auto s, impl.prepare("INSERT INTO events (" DLOOP_EVENT_COLUMNS
                                              ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                                              "appending events"));
  s.bind(1, run_id).bind(2, seq).bind(3, e.type).bind(4, e.step_path).bind(5, e.attempt).bind(6, e.turn);
  s.bind(7, ordinal).bind(8, e.payload.dump()).bind(9, ts);
  return s.run();
}

// Folds a step-level event into the step's derived row.
Status update_step(Store::Impl& impl, const std::string& run_id, int64_t seq, const NewEvent& e,
                   const std::string& ts) {
  StepRecord r;
  bool exists = false;
  {
    DLOOP_ASSIGN_OR_RETURN(auto s, impl.prepare("SELECT " DLOOP_STEP_COLUMNS
                                                " FROM steps WHERE run_id = ?1 AND step_path = ?2",
                                                "updating a step"));
    s.bind(1, run_id).bind(2, e.step_path);
    DLOOP_ASSIGN_OR_RETURN(exists, s.step());
    if (exists) {
      DLOOP_ASSIGN_OR_RETURN(r, detail::read_step(s));
    }
  }
  if (!exists) {
    r.first_seq = seq;
    r.started_at = ts;
  }
  r.last_seq = seq;
  r.attempts = std::max(r.attempts, e.attempt);
  if (e.type == event_type::kStepStarted) {
    r.status = StepStatus::kRunning;
    r.error.clear();
    r.ended_at.clear();
  } else if (e.type == event_type::kStepCompleted) {
    r.status = StepStatus::kCompleted;
    const Json* out = e.payload.find("output");
    r.output = out != nullptr ? *out : Json();
    r.error.clear();
    r.ended_at = ts;
  } else if (e.type == event_type::kStepFailed) {
    r.status = StepStatus::kFailed;
    r.error = error_text(e.payload, "error");
    r.ended_at = ts;
  } else if (e.type == event_type::kStepSkipped) {
    r.status = StepStatus::kSkipped;
    r.ended_at = ts;
  }
  DLOOP_ASSIGN_OR_RETURN(auto s, impl.prepare("INSERT OR REPLACE INTO steps (" DLOOP_STEP_COLUMNS
                                              ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                                              "updating a step"));
  s.bind(1, run_id).bind(2, e.step_path).bind(3, step_status_name(r.status)).bind(4, r.attempts);
  s.bind_opt(5, !r.output.is_null(), r.output.dump()).bind(6, r.error);
  s.bind_opt(7, !r.started_at.empty(), r.started_at).bind_opt(8, !r.ended_at.empty(), r.ended_at);
  s.bind(9, r.first_seq).bind(10, r.last_seq);
  return s.run();
}

// Folds a run-level event into the run's status, outputs and error.
Status update_run_state(Run& run, const NewEvent& e) {
  if (is_terminal(run.status) && e.type != event_type::kRunResumed) {
    return base::invalid_argument("run " + run.id + " is " + run_status_name(run.status) + "; '" + e.type +
                                  "' needs a run_resumed event first");
  }
  if (!e.step_path.empty()) return Status();
  if (e.type == event_type::kRunResumed) {
    run.status = RunStatus::kRunning;
    run.outputs = Json();
    run.error.clear();
  } else if (e.type == event_type::kRunCompleted) {
    run.status = RunStatus::kCompleted;
    const Json* out = e.payload.find("outputs");
    run.outputs = out != nullptr ? *out : Json::object();
  } else if (e.type == event_type::kRunFailed) {
    run.status = RunStatus::kFailed;
    run.error = error_text(e.payload, "error");
  } else if (e.type == event_type::kRunCancelled) {
    run.status = RunStatus::kCancelled;
    run.error = error_text(e.payload, "reason");
  }
  return Status();
}

Status save_run_state(Store::Impl& impl, const Run& run) {
  DLOOP_ASSIGN_OR_RETURN(auto s, impl.prepare("UPDATE runs SET status = ?2, outputs = ?3, error = ?4,"
                                              " updated_at = ?5, last_seq = ?6 WHERE id = ?1",
                                              "updating a run"));
  s.bind(1, run.id).bind(2, run_status_name(run.status)).bind_opt(3, !run.outputs.is_null(), run.outputs.dump());
  s.bind(4, run.error).bind(5, run.updated_at).bind(6, run.last_seq);
  return s.run();
}

Status put_kv(Store::Impl& impl, const Batch::KvPut& p, const std::string& ts) {
  DLOOP_ASSIGN_OR_RETURN(auto s, impl.prepare("INSERT INTO kv (workflow, key, value, updated_at) VALUES (?1, ?2, ?3, ?4)"
                                              " ON CONFLICT (workflow, key) DO UPDATE SET value = excluded.value,"
                                              " updated_at = excluded.updated_at",
                                              "writing kv memory"));
  s.bind(1, p.workflow).bind(2, p.key).bind(3, p.value.dump()).bind(4, ts);
  return s.run();
}

}  // namespace

Result<std::string> Store::create_run(const NewRun& run, const std::optional<LeaseRequest>& lease) {
  if (run.workflow.empty()) return base::invalid_argument("create_run: the workflow name is empty");
  if (!run.id.empty() && !valid_run_id(run.id)) {
    return base::invalid_argument("create_run: run id '" + run.id + "' is not [A-Za-z0-9._-]{1,128}");
  }
  std::lock_guard lock(impl_->mu);
  const int64_t ms = impl_->now_ms();
  const std::string ts = detail::iso_time(ms);
  std::string id;
  Status st = impl_->write_txn("creating a run", [&]() -> Status {
    // A generated id that collides (same second, same 32 random bits) is drawn again.
    for (int tries = 0;; ++tries) {
      id = run.id.empty() ? new_run_id(ms, impl_->rng) : run.id;
      auto existing = detail::load_run(*impl_, id);
      if (existing.status().code() != base::Code::kNotFound) {
        DLOOP_RETURN_IF_ERROR(existing.status());
        if (!run.id.empty() || tries >= 8) return base::invalid_argument("create_run: run id '" + id + "' exists");
        continue;
      }
      break;
    }
    {
      DLOOP_ASSIGN_OR_RETURN(auto s, impl_->prepare("INSERT INTO runs (" DLOOP_RUN_COLUMNS
                                                    ") VALUES (?1, ?2, ?3, ?4, ?5, 'running', NULL, '', ?6, ?6, 1)",
                                                    "creating a run"));
      s.bind(1, id).bind(2, run.workflow).bind(3, run.workflow_path).bind(4, run.workflow_hash);
      s.bind(5, run.inputs.dump()).bind(6, ts);
      DLOOP_RETURN_IF_ERROR(s.run());
    }
    NewEvent started{std::string(event_type::kRunStarted), "", 0, 0, Json::object()};
    started.payload.set("workflow", run.workflow);
    started.payload.set("workflow_path", run.workflow_path);
    started.payload.set("workflow_hash", run.workflow_hash);
    started.payload.set("inputs", run.inputs);
    if (run.env.is_object()) started.payload.set("env", run.env);
    if (!run.secret_env.empty()) {
      Json names = Json::array();
      for (const auto& n : run.secret_env) names.push_back(n);
      started.payload.set("secret_env", std::move(names));
    }
    DLOOP_RETURN_IF_ERROR(insert_event(*impl_, id, 1, started, ts));
    if (lease) return detail::put_lease(*impl_, id, *lease, ms, false);
    return Status();
  });
  if (!st.ok()) return st;
  return id;
}

Result<int64_t> Store::commit(const Batch& batch) {
  for (const NewEvent& e : batch.events()) DLOOP_RETURN_IF_ERROR(validate(e));
  for (const auto& p : batch.kv_puts()) DLOOP_RETURN_IF_ERROR(detail::validate_kv_key(p.workflow, p.key));
  std::lock_guard lock(impl_->mu);
  const std::string ts = impl_->now();
  int64_t last_seq = 0;
  Status st = impl_->write_txn("appending to run " + batch.run_id(), [&]() -> Status {
    DLOOP_ASSIGN_OR_RETURN(Run run, detail::load_run(*impl_, batch.run_id()));
    if (!batch.lease_owner().empty()) {
      DLOOP_RETURN_IF_ERROR(detail::check_lease(*impl_, run.id, batch.lease_owner()));
      if (batch.release_lease()) DLOOP_RETURN_IF_ERROR(detail::delete_lease(*impl_, run.id));
    }
    for (const NewEvent& e : batch.events()) {
      DLOOP_RETURN_IF_ERROR(update_run_state(run, e));
      const int64_t seq = ++run.last_seq;
      DLOOP_RETURN_IF_ERROR(insert_event(*impl_, run.id, seq, e, ts));
      if (!e.step_path.empty()) DLOOP_RETURN_IF_ERROR(update_step(*impl_, run.id, seq, e, ts));
    }
    for (const auto& p : batch.kv_puts()) DLOOP_RETURN_IF_ERROR(put_kv(*impl_, p, ts));
    run.updated_at = ts;
    last_seq = run.last_seq;
    return save_run_state(*impl_, run);
  });
  if (!st.ok()) return st;
  return last_seq;
}

Result<int64_t> Store::append(const std::string& run_id, std::vector<NewEvent> events) {
  Batch batch(run_id);
  for (NewEvent& e : events) batch.append(std::move(e));
  return commit(batch);
}

Result<int64_t> Store::finish_run(const std::string& run_id, RunStatus status, Json outputs,
                                  const std::string& error, const std::string& lease_owner) {
  NewEvent e;
  e.payload = Json::object();
  switch (status) {
    case RunStatus::kRunning: return base::invalid_argument("finish_run: 'running' is not a final status");
    case RunStatus::kCompleted:
      e.type = event_type::kRunCompleted;
      e.payload.set("outputs", outputs.is_null() ? Json::object() : std::move(outputs));
      break;
    case RunStatus::kFailed:
      e.type = event_type::kRunFailed;
      e.payload.set("error", error);
      break;
    case RunStatus::kCancelled:
      e.type = event_type::kRunCancelled;
      e.payload.set("reason", error);
      break;
  }
  Batch batch(run_id);
  batch.append(std::move(e));
  if (!lease_owner.empty()) batch.lease(lease_owner, true);
  return commit(batch);
}

Status Store::import_run(const Run& run, const std::vector<Event>& events) {
  if (!valid_run_id(run.id)) return base::invalid_argument("import: run id '" + run.id + "' is not [A-Za-z0-9._-]{1,128}");
  if (run.workflow.empty()) return base::invalid_argument("import: run " + run.id + " has no workflow name");
  if (events.empty() || events[0].type != event_type::kRunStarted) {
    return base::invalid_argument("import: run " + run.id + ": the first event must be run_started");
  }
  std::map<std::tuple<std::string, int64_t, std::string>, int64_t> ordinals;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    const std::string where = "import: run " + run.id + ", event seq " + std::to_string(e.seq);
    if (e.seq != static_cast<int64_t>(i) + 1) {
      return base::invalid_argument(where + ": expected seq " + std::to_string(i + 1) + " (events are numbered 1..n)");
    }
    if (i > 0) {
      NewEvent ne{e.type, e.step_path, e.attempt, e.turn, e.payload};
      Status v = validate(ne);
      if (!v.ok()) return base::invalid_argument(where + ": " + v.message());
    }
    int64_t& next = ordinals[{e.step_path, e.attempt, e.type}];
    if (e.ordinal != next) {
      return base::invalid_argument(where + ": ordinal " + std::to_string(e.ordinal) + ", the log assigns " +
                                    std::to_string(next));
    }
    ++next;
  }
  std::lock_guard lock(impl_->mu);
  return impl_->write_txn("importing run " + run.id, [&]() -> Status {
    auto existing = detail::load_run(*impl_, run.id);
    if (existing.ok()) return base::invalid_argument("import: a run with id '" + run.id + "' exists");
    if (existing.status().code() != base::Code::kNotFound) return existing.status();
    const std::string& created = events[0].ts;
    {
      DLOOP_ASSIGN_OR_RETURN(auto s, impl_->prepare("INSERT INTO runs (" DLOOP_RUN_COLUMNS
                                                    ") VALUES (?1, ?2, ?3, ?4, ?5, 'running', NULL, '', ?6, ?6, 1)",
                                                    "importing a run"));
      s.bind(1, run.id).bind(2, run.workflow).bind(3, run.workflow_path).bind(4, run.workflow_hash);
      s.bind(5, run.inputs.is_null() ? std::string("{}") : run.inputs.dump()).bind(6, created);
      DLOOP_RETURN_IF_ERROR(s.run());
    }
    Run state;
    state.id = run.id;
    for (const Event& e : events) {
      NewEvent ne{e.type, e.step_path, e.attempt, e.turn, e.payload};
      if (e.seq > 1) {
        Status st = update_run_state(state, ne);
        if (!st.ok()) return base::invalid_argument("import: event seq " + std::to_string(e.seq) + ": " + st.message());
      }
      DLOOP_RETURN_IF_ERROR(insert_event(*impl_, run.id, e.seq, ne, e.ts));
      if (!e.step_path.empty()) DLOOP_RETURN_IF_ERROR(update_step(*impl_, run.id, e.seq, ne, e.ts));
    }
    state.last_seq = static_cast<int64_t>(events.size());
    state.updated_at = events.back().ts;
    return save_run_state(*impl_, state);
  });
}

Result<std::vector<Event>> Store::events(const std::string& run_id, int64_t after_seq, int64_t limit) const {
  std::lock_guard lock(impl_->mu);
  DLOOP_ASSIGN_OR_RETURN(auto s, impl_->prepare("SELECT " DLOOP_EVENT_COLUMNS " FROM events"
                                                " WHERE run_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
                                                "reading events"));
  s.bind(1, run_id).bind(2, after_seq).bind(3, limit > 0 ? limit : int64_t{-1});
  std::vector<Event> out;
  while (true) {
    DLOOP_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    DLOOP_ASSIGN_OR_RETURN(Event e, detail::read_event(s));
    out.push_back(std::move(e));
  }
  // Every run has run_started, so an empty answer is either an unknown run or the end.
  if (out.empty()) DLOOP_RETURN_IF_ERROR(detail::load_run(*impl_, run_id).status());
  return out;
}

Result<std::optional<Event>> Store::recorded(const std::string& run_id, const CallKey& key) const {
  std::lock_guard lock(impl_->mu);
  DLOOP_ASSIGN_OR_RETURN(auto s, impl_->prepare("SELECT " DLOOP_EVENT_COLUMNS " FROM events WHERE run_id = ?1"
                                                " AND step_path = ?2 AND attempt = ?3 AND type = ?4 AND ordinal = ?5",
                                                "looking up a recorded call"));
  s.bind(1, run_id).bind(2, key.step_path).bind(3, key.attempt).bind(4, key.type).bind(5, key.ordinal);
  DLOOP_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row) return std::optional<Event>();
  DLOOP_ASSIGN_OR_RETURN(Event e, detail::read_event(s));
  return std::optional<Event>(std::move(e));
}

Result<std::optional<Event>> Store::recorded_tool_result(const std::string& run_id, const std::string& step_path,
                                                         int64_t attempt, int64_t ordinal) const {
  return recorded(run_id, CallKey{step_path, attempt, std::string(event_type::kToolResult), ordinal});
}

Result<std::optional<Event>> Store::recorded_model_output(const std::string& run_id, const std::string& step_path,
                                                          int64_t attempt, int64_t ordinal) const {
  return recorded(run_id, CallKey{step_path, attempt, std::string(event_type::kModelCall), ordinal});
}

}  // namespace dloop::memory
