// RunContext: the state of one executing run (private to runtime/). It walks the workflow's step
// tree as coroutines on the loop's executor, keeps the expression scope, commits events through
// the Store on the db worker, and, when resuming, answers "was this already recorded?" from the
// log it loaded at the start. Used by one run's coroutines only, all on one executor.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "dloop/base/json.h"
#include "dloop/engine/tool_call.h"
#include "dloop/memory/records.h"
#include "dloop/runtime/executor.h"
#include "dloop/tools/registry.h"
#include "dloop/workflows/expr.h"
#include "mcp_servers.h"

namespace dloop::runtime {

namespace asio = boost::asio;
using base::Json;
using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// Expression names visible to a step: steps.<id> records and loop variables.
struct Scope {
  Json steps = Json::object();
  std::vector<std::pair<std::string, Json>> vars;  // as/index of enclosing loops, innermost last
};

// How a step (or a body) ended.
struct Outcome {
  enum class Kind { kOk, kSkipped, kFailed, kCancelled };
  Kind kind = Kind::kOk;
  Json output;
  std::string error_kind;  // workflows::error_kind_name() of the failure
  std::string message;
  bool continued = false;  // failed, but continue_on_error let the run go on

  static Outcome ok(Json output) {
    Outcome o;
    o.output = std::move(output);
    return o;
  }
  static Outcome fail(std::string kind, std::string message) {
    Outcome o;
    o.kind = Kind::kFailed;
    o.error_kind = std::move(kind);
    o.message = std::move(message);
    return o;
  }
  static Outcome cancelled() {
    Outcome o;
    o.kind = Kind::kCancelled;
    o.error_kind = "cancelled";
    o.message = "the run was interrupted";
    return o;
  }
  bool stops_run() const { return kind == Kind::kCancelled || (kind == Kind::kFailed && !continued); }
};

class RunContext {
 public:
  RunContext(RunRequest request, RuntimeServices services);

  asio::awaitable<RunOutcome> run();

  // --- used by the step implementations (executor.cpp, steps.cpp, agent_step.cpp) ---
  // `prefix` is taken by value: a coroutine starts when awaited, after a temporary argument died.
  asio::awaitable<Outcome> run_steps(const std::vector<workflows::Step>& steps, Scope& scope, std::string prefix,
                                     Deadline deadline);
  asio::awaitable<Outcome> run_step(const workflows::Step& step, Scope& scope, std::string prefix,
                                    Deadline deadline);
  asio::awaitable<Outcome> run_body(const workflows::Step& step, Scope& scope, const std::string& path,
                                    int64_t attempt, Deadline deadline, std::vector<memory::NewEvent>& pending);
  asio::awaitable<Outcome> run_tool(const workflows::Step& step, const workflows::ToolStep& tool, Scope& scope,
                                    const std::string& path, int64_t attempt, Deadline deadline,
                                    std::vector<memory::NewEvent>& pending);
  asio::awaitable<Outcome> run_agent(const workflows::Step& step, const workflows::AgentStep& agent, Scope& scope,
                                     const std::string& path, int64_t attempt, Deadline deadline,
                                     std::vector<memory::NewEvent>& pending);
  asio::awaitable<Outcome> run_for_each(const workflows::ForEachStep& loop, Scope& scope, const std::string& path,
                                        Deadline deadline);
  asio::awaitable<Outcome> run_repeat(const workflows::RepeatUntilStep& loop, Scope& scope, const std::string& path,
                                      Deadline deadline);
  asio::awaitable<Outcome> run_parallel(const workflows::ParallelStep& par, Scope& scope, const std::string& path,
                                        Deadline deadline);
  // A detached body (loop iteration, parallel branch) that owns its scope: for co_spawn.
  asio::awaitable<Outcome> run_isolated(const std::vector<workflows::Step>* steps, Scope scope, std::string prefix,
                                        Deadline deadline);
  asio::awaitable<Outcome> run_branch(const workflows::Step* step, Scope scope, std::string prefix, Deadline deadline);

  // Commits events (one transaction) under the run's lease, retrying a busy store (store_call).
  // Errors are the Store's; once the run stopped writing (stopped()) every commit fails at once.
  asio::awaitable<base::Status> commit(std::vector<memory::NewEvent> events);
  // Runs `work` on the db worker; while it returns unavailable (SQLITE_BUSY/LOCKED after
  // busy_timeout) it is retried with backoff for services_.store_retry.budget_ms. Giving up, or a
  // lost lease (cancelled), stops the run's writes: the run ends left resumable (run_lease.cpp).
  asio::awaitable<base::Status> store_call(std::function<base::Status()> work, std::string what);
  // Set once this process must not write to the run any more (lease lost, store gave up).
  bool stopped() const { return !stop_->ok(); }
  struct Heartbeat;  // run_lease.cpp (public so that its coroutine can name it)
  void stop_heartbeat();  // when the run ended (execute_run)
  // The recorded event (resume only), or nullptr.
  const memory::Event* recorded(const std::string& path, int64_t attempt, std::string_view type,
                                int64_t ordinal) const;

  // The model and tool hooks (replay_hooks.cpp): the engine and the tool, or during a replay the
  // recorded output and result (replay.h). Arguments by value: coroutines outlive temporaries.
  asio::awaitable<base::Result<engine::ToolCallResult>> ask_model(std::string path, int64_t attempt, int64_t turn,
                                                                  engine::ToolCallRequest req, Json request);
  asio::awaitable<tools::ToolResult> call_tool(const tools::Registry* registry, std::string path, int64_t attempt,
                                               int64_t turn, int64_t ordinal, std::string name, Json arguments,
                                               tools::ToolContext ctx);

  workflows::EvalContext eval_context(const Scope& scope) const;
  // What a tool invoked by this run gets: blocking pool, deadline, workspace, the workflow as scope.
  tools::ToolContext tool_context(Deadline deadline) const;
  bool cancelled() const {
    return services_.cancelled->load() || stopped() || (request_.replay && request_.replay->stopped());
  }
  bool strict_replay() const { return request_.replay && request_.replay->strict(); }
  const RunRequest& request() const { return request_; }
  const RuntimeServices& services() const { return services_; }
  const tools::Registry& registry() const { return registry_; }
  const std::string& run_id() const { return run_id_; }
  const std::string& lease_owner() const { return lease_owner_; }

 private:
  asio::awaitable<base::Status> start();
  asio::awaitable<base::Status> build_registry();  // starts the workflow's MCP servers too
  asio::awaitable<void> stop_mcp_servers();        // then records their stderr (mcp_log events)
  asio::awaitable<RunOutcome> finish(Outcome outcome, const Scope& scope);
  // Run leases (run_lease.cpp): the LeaseRequest for this process, taking the lease of a resumed
  // run (refusal: a Status naming the holder and its expiry), and the heartbeat that renews it on
  // the loop until stop_heartbeat().
  memory::LeaseRequest lease_request() const;
  asio::awaitable<base::Status> take_lease();
  void start_heartbeat(asio::any_io_executor loop);
  RunOutcome left_resumable(base::Status why) const;

  RunRequest request_;
  RuntimeServices services_;
  tools::Registry registry_;
  McpServers mcp_;  // the run's MCP servers; stopped when the run ends
  std::string run_id_;
  Json run_info_ = Json::object();  // run.id, run.workflow, run.started_at
  Json env_ = Json::object();
  using Key = std::tuple<std::string, int64_t, std::string, int64_t>;
  std::map<Key, memory::Event> recorded_;
  std::string lease_owner_;  // "" until the lease is taken (and for replays, which take none)
  // Why this process stopped writing to the run (ok: it did not). Shared with the heartbeat.
  std::shared_ptr<base::Status> stop_ = std::make_shared<base::Status>();
  std::shared_ptr<Heartbeat> heartbeat_;
};

// The model_call payload's `output`: {type: call, name, arguments} or {type: answer, text}.
Json model_output_json(const engine::ToolCallResult& r);
// A ToolCallResult rebuilt from a recorded model_call payload (output, counts, timings, prompt).
engine::ToolCallResult model_result_from_record(const Json& payload);
// A ToolResult rebuilt from a recorded tool_result payload ({result} or {error: {code, message}}).
tools::ToolResult tool_result_from_record(const Json& payload);
// Milliseconds since the Unix epoch (trace timestamps).
int64_t unix_ms_now();

// A step's record for `steps.<id>`: {output, status, error}.
Json step_record(const Outcome& outcome);
// The completion handler's result of an awaited co_spawn that threw: a failed Outcome.
Outcome outcome_from_exception(std::exception_ptr e);

}  // namespace dloop::runtime
