// runtime::execute_run: runs one Workflow on an Asio io_context as C++20 coroutines and records
// every event through memory::Store. Each step is a coroutine; agent steps ask the engine (on its
// own thread, engine_bridge.h) for a tool call or an answer; Store calls run on a worker thread so
// the loop never blocks on SQLite. Resume re-executes the workflow against the run's event log:
// completed steps, recorded model outputs and recorded tool results are reused, never re-run.
// docs/runtime.md describes the semantics (paths, attempts, one transaction per turn, exit codes).
//
// Thread-safety: a RunRequest is used by one run; the Store and EngineBridge are shared and
// thread-safe. Errors are values: the run's Status (failed or cancelled) is in RunOutcome.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "dloop/base/json.h"
#include "dloop/base/status.h"
#include "dloop/memory/store.h"
#include "dloop/runtime/engine_bridge.h"
#include "dloop/runtime/replay.h"
#include "dloop/workflows/workflow.h"

namespace dloop::runtime {

struct RunRequest {
  std::shared_ptr<const workflows::Workflow> workflow;
  std::string workflow_path;               // as given; stored for resume
  std::string workflow_hash;               // "sha256:..." of the file text
  base::Json inputs = base::Json::object();  // already resolved (workflows::resolve_inputs)
  std::string resume_run_id;               // non-empty: continue this run from its log
  std::filesystem::path workspace;         // root of file tools and processes
  // Called with each event as it is committed (for --json-events); may be empty.
  std::function<void(const memory::Event&)> on_event;
  // Called once the run id is known (created or resumed), before any step runs; may be empty.
  std::function<void(const std::string&)> on_run_id;
  // Set: re-execute against this record (replay.h) as a new run in the store; the `run` values
  // expressions see (id, started_at) and `env` are the recorded ones.
  std::shared_ptr<ReplayLog> replay;
  // Resume only. A resume always takes a lease that is free, expired, or held by a process of this
  // host (and PID namespace) that no longer exists (a SIGKILLed dloop). force_lease also takes
  // over an unexpired lease held from another host (its owner says that host is down). A live
  // holder on this host is never displaced.
  bool force_lease = false;
};

struct RunOutcome {
  std::string run_id;     // empty when the run could not even be created
  base::Status status;    // ok, or the failure (cancelled when interrupted)
  base::Json outputs;     // the workflow's outputs when status is ok
  // The run was left `running` and resumable, without a terminal event: another process holds
  // its lease (status says who, and until when), this process lost the lease, or the store stayed
  // busy past the retry budget. status is not ok then.
  bool left_resumable = false;
};

// How long a busy or locked store (unavailable) is retried before the run gives up and is left
// resumable, and the backoff between tries (each try also waits SQLite's busy_timeout).
struct StoreRetry {
  int64_t budget_ms = 60000;
  int64_t first_delay_ms = 50;
  int64_t max_delay_ms = 2000;
};

// Shared by every run in the process: the store, the engine bridge (may be null: a workflow with
// an agent step then fails), a thread pool for blocking tool work, and the Ctrl-C flag.
struct RuntimeServices {
  std::shared_ptr<memory::Store> store;
  std::shared_ptr<EngineBridge> engine;
  boost::asio::any_io_executor blocking;  // a thread pool's executor (tools' blocking work)
  boost::asio::any_io_executor db;        // a single-thread pool's executor for Store calls
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
  StoreRetry store_retry;
  int64_t lease_ttl_ms = 30000;  // a run's lease; renewed every third of it (docs/state.md)
};

// Runs (or resumes) one run to completion. Never throws; the RunOutcome says how it ended and the
// run's terminal event is in the log (run_completed, run_failed or run_cancelled).
boost::asio::awaitable<RunOutcome> execute_run(RunRequest request, RuntimeServices services);

// "sha256:<hex>" of the bytes.
std::string sha256_hex(std::string_view bytes);

}  // namespace dloop::runtime
