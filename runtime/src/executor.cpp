// The run driver: creates (or resumes) the run in the Store, builds the tool registry, walks the
// top-level steps, evaluates `outputs` and writes the terminal event. Per-step attempts, retries
// with backoff, `if` skipping and resume short-cuts live in run_step(). See run_context.h.
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <ctime>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include "dloop/base/log.h"
#include "dloop/tools/builtins.h"
#include "dloop/tools/command_tool.h"
#include "dloop/runtime/store_kv.h"
#include "doc_search.h"
#include "offload.h"
#include "run_context.h"

namespace dloop::runtime {

namespace et = memory::event_type;
using workflows::Step;

Json step_record(const Outcome& o) {
  Json r = Json::object();
  const bool ok = o.kind == Outcome::Kind::kOk;
  r.set("output", ok ? o.output : Json());
  r.set("status", ok ? "succeeded" : o.kind == Outcome::Kind::kSkipped ? "skipped" : "failed");
  if (o.kind == Outcome::Kind::kFailed) {
    Json e = Json::object();
    e.set("kind", o.error_kind);
    e.set("message", o.message);
    r.set("error", std::move(e));
  } else {
    r.set("error", Json());
  }
  return r;
}

Outcome outcome_from_exception(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const boost::system::system_error& se) {
    if (se.code() == asio::error::operation_aborted) return Outcome::cancelled();
    return Outcome::fail("any", se.what());
  } catch (const std::exception& ex) {
    return Outcome::fail("any", std::string("internal error: ") + ex.what());
  } catch (...) {
    return Outcome::fail("any", "internal error");
  }
}

namespace {

// Test hook for the crash-resume test: DLOOP_TEST_KILL_AFTER_COMMITS=N makes the process SIGKILL
// itself right after its N-th committed batch, the way a crash would.
void maybe_kill_for_test() {
  static const long limit = [] {
    const char* v = std::getenv("DLOOP_TEST_KILL_AFTER_COMMITS");
    return v ? std::atol(v) : 0L;
  }();
  static std::atomic<long> commits{0};
  if (limit > 0 && ++commits >= limit) ::raise(SIGKILL);
}

}  // namespace

RunContext::RunContext(RunRequest request, RuntimeServices services)
    : request_(std::move(request)), services_(std::move(services)) {}

const memory::Event* RunContext::recorded(const std::string& path, int64_t attempt, std::string_view type,
                                          int64_t ordinal) const {
  auto it = recorded_.find(Key{path, attempt, std::string(type), ordinal});
  return it == recorded_.end() ? nullptr : &it->second;
}

workflows::EvalContext RunContext::eval_context(const Scope& scope) const {
  workflows::EvalContext c;
  c.bind("inputs", request_.inputs);
  c.bind("run", run_info_);
  c.bind("env", env_);
  c.bind("steps", scope.steps);
  for (const auto& [name, value] : scope.vars) c.bind(name, value);
  return c;
}

tools::ToolContext RunContext::tool_context(Deadline deadline) const {
  tools::ToolContext c;
  c.blocking = services_.blocking;
  c.deadline = deadline;
  c.workspace = request_.workspace;
  c.scope = request_.workflow->name;
  return c;
}

asio::awaitable<base::Status> RunContext::commit(std::vector<memory::NewEvent> events) {
  if (events.empty()) co_return base::Status();
  if (request_.replay) {
    for (const auto& e : events) request_.replay->check_event(e);
  }
  auto store = services_.store;
  // With an on_event listener the committed events are read back in the same worker call, so it
  // sees them exactly as stored (seq, ordinal, ts).
  auto committed = std::make_shared<std::vector<memory::Event>>();
  const size_t n = events.size();
  auto work = [store, run_id = run_id_, events, owner = lease_owner_, committed,
               want = static_cast<bool>(request_.on_event), n]() -> base::Status {
    memory::Batch batch(run_id);
    for (const auto& e : events) batch.append(e);
    if (!owner.empty()) batch.lease(owner);
    DLOOP_ASSIGN_OR_RETURN(int64_t last_seq, store->commit(batch));
    if (want) {
      auto back = store->events(run_id, last_seq - static_cast<int64_t>(n), static_cast<int>(n));
      if (back.ok()) *committed = std::move(back).value();
    }
    return base::Status();
  };
  auto op = store_call(std::move(work), "appending to run " + run_id_);
  base::Status st = co_await std::move(op);
  maybe_kill_for_test();
  if (st.ok() && request_.on_event) {
    for (const auto& ev : *committed) request_.on_event(ev);
  }
  co_return st;
}

asio::awaitable<base::Status> RunContext::build_registry() {
  const auto& wf = *request_.workflow;
  auto kv = std::make_shared<StoreKvStore>(services_.store);
  workflows::EvalContext ctx;
  ctx.bind("inputs", request_.inputs);
  ctx.bind("run", run_info_);
  ctx.bind("env", env_);
  const std::filesystem::path base_dir = std::filesystem::path(request_.workflow_path).parent_path();
  for (const auto& t : wf.tools) {
    std::shared_ptr<tools::Tool> tool;
    if (const auto* b = std::get_if<workflows::BuiltinTool>(&t.spec)) {
      auto with = workflows::evaluate_value(b->with, ctx);
      if (!with.ok()) co_return with.status();
      tools::BuiltinSpec spec{b->use, t.name, t.description, std::move(with).value()};
      auto made = tools::make_builtin(spec, tools::BuiltinEnv{kv, make_doc_search(services_.store->path())});
      if (!made.ok()) co_return made.status();
      tool = std::move(made).value();
    } else if (const auto* c = std::get_if<workflows::CommandTool>(&t.spec)) {
      auto command_value = workflows::evaluate_value(c->command, ctx);
      if (!command_value.ok()) co_return command_value.status();
      Json command = std::move(command_value).value();
      Json decl = Json::object();
      decl.set("name", t.name);
      if (!t.description.empty()) decl.set("description", t.description);
      decl.set("command", std::move(command));
      decl.set("parameters", c->parameters);
      if (c->timeout_ms) decl.set("timeout", std::to_string(*c->timeout_ms) + "ms");
      auto made = tools::make_command_tool(decl, base_dir.empty() ? "." : base_dir);
      if (!made.ok()) co_return made.status();
      tool = std::move(made).value();
    } else {
      auto op = mcp_.start(t, ctx, base_dir.empty() ? "." : base_dir, request_.workspace);
      auto started = co_await std::move(op);
      if (!started.ok()) co_return started.status();
      for (auto& mcp_tool : *started) {
        base::Status added = registry_.add(std::move(mcp_tool));
        if (!added.ok()) co_return added.with_context("tool at line " + std::to_string(t.location.line));
      }
      continue;
    }
    base::Status added = registry_.add(std::move(tool));
    if (!added.ok()) co_return added;
  }
  co_return base::Status();
}

asio::awaitable<base::Status> RunContext::start() {
  const auto& wf = *request_.workflow;
  // A replay sees the recorded environment values (a name the record lacks: the current one).
  const Json* recorded_env = request_.replay && request_.replay->recorded_env().is_object()
                                 ? &request_.replay->recorded_env()
                                 : nullptr;
  for (const auto& name : wf.env) {
    const Json* rec = recorded_env ? recorded_env->find(name) : nullptr;
    const char* v = std::getenv(name.c_str());
    env_.set(name, rec ? *rec : v ? Json(v) : Json());
  }
  auto store = services_.store;
  std::string started_at;
  std::vector<memory::Event> started_event;
  if (request_.resume_run_id.empty()) {
    memory::NewRun nr;
    nr.workflow = wf.name;
    nr.workflow_path = request_.workflow_path;
    nr.workflow_hash = request_.workflow_hash;
    nr.inputs = request_.inputs;
    nr.env = env_;
    nr.secret_env = wf.secret_env;
    // The run's creation time is run.started_at, the same value a resume reads from the log. A
    // replay's run lives in a private database: it takes no lease. run_started (seq 1) is written
    // by create_run; it is read back for the on_event listener.
    std::optional<memory::LeaseRequest> lease;
    if (!request_.replay) lease = lease_request();
    struct Created {
      std::string id, created_at;
      std::vector<memory::Event> first;
    };
    auto created = std::make_shared<Created>();
    auto work = [store, nr, lease, created]() -> base::Status {
      DLOOP_ASSIGN_OR_RETURN(created->id, store->create_run(nr, lease));
      DLOOP_ASSIGN_OR_RETURN(memory::Run run, store->get_run(created->id));
      created->created_at = run.created_at;
      DLOOP_ASSIGN_OR_RETURN(created->first, store->events(created->id, 0, 1));
      return base::Status();
    };
    auto op = store_call(std::move(work), "creating a run");
    base::Status st = co_await std::move(op);
    if (!st.ok()) co_return st;
    run_id_ = created->id;
    started_at = created->created_at;
    started_event = std::move(created->first);
    if (lease) lease_owner_ = lease->owner;
    auto loop = co_await asio::this_coro::executor;
    start_heartbeat(loop);
  } else {
    run_id_ = request_.resume_run_id;
    // The lease first: the log read below is then the one no other process is extending.
    if (!request_.replay) {
      auto take = take_lease();
      base::Status taken = co_await std::move(take);
      if (!taken.ok()) co_return taken;
      auto loop = co_await asio::this_coro::executor;
      start_heartbeat(loop);
    }
    auto log = std::make_shared<std::vector<memory::Event>>();
    auto work = [store, id = run_id_, log]() -> base::Status {
      DLOOP_ASSIGN_OR_RETURN(*log, store->events(id));
      return base::Status();
    };
    auto op = store_call(std::move(work), "reading run " + run_id_);
    base::Status read = co_await std::move(op);
    if (!read.ok()) co_return read;
    int64_t last = 0;
    for (auto& e : *log) {
      last = e.seq;
      recorded_.emplace(Key{e.step_path, e.attempt, e.type, e.ordinal}, std::move(e));
    }
    memory::NewEvent resumed;
    resumed.type = std::string(et::kRunResumed);
    resumed.payload.set("from_seq", last);
    resumed.payload.set("reason", "dloop resume");
    std::vector<memory::NewEvent> evs;
    evs.push_back(std::move(resumed));
    auto c = commit(std::move(evs));
    base::Status st = co_await std::move(c);
    if (!st.ok()) co_return st;
  }
  if (request_.on_run_id) request_.on_run_id(run_id_);
  if (request_.on_event) {
    for (const auto& e : started_event) request_.on_event(e);
  }
  if (const memory::Event* started = recorded("", 0, et::kRunStarted, 0)) started_at = started->ts;
  if (request_.replay) started_at = request_.replay->started_at();
  run_info_.set("id", request_.replay ? request_.replay->run().id : run_id_);
  run_info_.set("workflow", wf.name);
  run_info_.set("started_at", started_at);
  auto registry = build_registry();
  co_return co_await std::move(registry);
}

asio::awaitable<RunOutcome> RunContext::run() {
  RunOutcome result;
  auto s = start();
  base::Status st = co_await std::move(s);
  result.run_id = run_id_;
  Scope scope;
  if (!st.ok()) {
    if (stopped()) co_return left_resumable(*stop_);
    if (run_id_.empty()) {
      result.status = st;
      co_return result;
    }
    auto stop = stop_mcp_servers();
    co_await std::move(stop);
    auto f = finish(Outcome::fail("any", st.message()), scope);
    co_return co_await std::move(f);
  }
  Outcome o;
  try {
    auto steps = run_steps(request_.workflow->steps, scope, "", Deadline::max());
    o = co_await std::move(steps);
  } catch (...) {
    o = outcome_from_exception(std::current_exception());
  }
  if (cancelled()) o = Outcome::cancelled();
  auto stop = stop_mcp_servers();
  co_await std::move(stop);
  auto f = finish(std::move(o), scope);
  co_return co_await std::move(f);
}

asio::awaitable<void> RunContext::stop_mcp_servers() {
  if (mcp_.empty()) co_return;
  auto stop = mcp_.stop();
  co_await std::move(stop);
  auto events = mcp_.take_log_events();
  if (events.empty() || request_.replay) co_return;  // a replay checks the recorded log; it adds nothing
  auto c = commit(std::move(events));
  base::Status st = co_await std::move(c);
  (void)st;  // the servers' stderr is also in dloop's log; a failed commit fails the run's next write
}

asio::awaitable<RunOutcome> RunContext::finish(Outcome o, const Scope& scope) {
  RunOutcome result;
  result.run_id = run_id_;
  memory::RunStatus status = memory::RunStatus::kCompleted;
  std::string error;
  Json outputs = Json::object();
  if (o.stops_run()) {
    status = o.kind == Outcome::Kind::kCancelled ? memory::RunStatus::kCancelled : memory::RunStatus::kFailed;
    error = o.message;
  } else {
    workflows::EvalContext ctx = eval_context(scope);
    for (const auto& [name, value] : request_.workflow->outputs) {
      auto v = workflows::evaluate_value(value, ctx);
      if (!v.ok()) {
        status = memory::RunStatus::kFailed;
        error = "outputs." + name + ": " + v.status().message();
        break;
      }
      outputs.set(name, std::move(v).value());
    }
  }
  if (request_.replay) request_.replay->check_finish(status, outputs, error);
  if (stopped()) co_return left_resumable(*stop_);
  auto store = services_.store;
  auto finished = std::make_shared<std::vector<memory::Event>>();
  auto work = [store, id = run_id_, status, outputs, error, owner = lease_owner_, finished,
               want = static_cast<bool>(request_.on_event)]() -> base::Status {
    DLOOP_ASSIGN_OR_RETURN(int64_t last_seq, store->finish_run(id, status,
                                                               status == memory::RunStatus::kCompleted ? outputs : Json(),
                                                               error, owner));
    if (want) {
      auto back = store->events(id, last_seq - 1, 1);  // the terminal event as stored (with ts)
      if (back.ok()) *finished = std::move(back).value();
    }
    return base::Status();
  };
  auto op = store_call(std::move(work), "finishing run " + run_id_);
  base::Status st = co_await std::move(op);
  if (stopped()) co_return left_resumable(*stop_);
  if (!st.ok()) {
    result.status = st;
    co_return result;
  }
  if (request_.on_event) {
    for (const auto& ev : *finished) request_.on_event(ev);
  }
  if (status == memory::RunStatus::kCompleted) {
    result.outputs = std::move(outputs);
  } else if (status == memory::RunStatus::kCancelled) {
    result.status = base::cancelled(error);
  } else {
    result.status = base::Status(base::Code::kInternal, error);
  }
  co_return result;
}

asio::awaitable<Outcome> RunContext::run_steps(const std::vector<Step>& steps, Scope& scope, std::string prefix,
                                               Deadline deadline) {
  Outcome last = Outcome::ok(Json());
  for (const auto& step : steps) {
    if (cancelled()) co_return Outcome::cancelled();
    if (Clock::now() >= deadline) co_return Outcome::fail("timeout", "the enclosing step's timeout passed");
    auto s = run_step(step, scope, prefix, deadline);
    last = co_await std::move(s);
    if (last.stops_run()) co_return last;
  }
  // A body's output is its last step's output (null when that step was skipped or failed).
  Outcome out = Outcome::ok(last.kind == Outcome::Kind::kOk ? last.output : Json());
  co_return out;
}

namespace {

bool retry_applies(const workflows::RetryPolicy& p, const std::string& kind) {
  if (kind == "cancelled") return false;
  for (auto k : p.on) {
    if (k == workflows::ErrorKind::kAny || kind == workflows::error_kind_name(k)) return true;
  }
  return false;
}

memory::NewEvent event(std::string_view type, const std::string& path, int64_t attempt, Json payload) {
  memory::NewEvent e;
  e.type = std::string(type);
  e.step_path = path;
  e.attempt = attempt;
  e.payload = std::move(payload);
  return e;
}

Json error_json(const Outcome& o) {
  Json e = Json::object();
  e.set("code", o.error_kind);
  e.set("message", o.message);
  return e;
}

}  // namespace

asio::awaitable<Outcome> RunContext::run_step(const Step& step, Scope& scope, std::string prefix,
                                              Deadline deadline) {
  const std::string path = prefix.empty() ? step.id : prefix + "/" + step.id;
  // Resume: a step the log shows finished is not run again.
  for (int64_t a = 1;; ++a) {
    if (!recorded(path, a, et::kStepStarted, 0)) break;
    if (const auto* done = recorded(path, a, et::kStepCompleted, 0)) {
      const Json* out = done->payload.find("output");
      Outcome o = Outcome::ok(out ? *out : Json());
      scope.steps.set(step.id, step_record(o));
      co_return o;
    }
  }
  if (recorded(path, 0, et::kStepSkipped, 0)) {
    Outcome o;
    o.kind = Outcome::Kind::kSkipped;
    scope.steps.set(step.id, step_record(o));
    co_return o;
  }
  const bool is_if = std::holds_alternative<workflows::IfStep>(step.kind);
  if (step.condition && !is_if) {
    auto v = workflows::render(*step.condition, eval_context(scope));
    if (!v.ok()) {
      Outcome o = Outcome::fail("any", "step '" + step.id + "': if: " + v.status().message());
      scope.steps.set(step.id, step_record(o));
      co_return o;
    }
    if (!workflows::truthy(*v)) {
      Json payload = Json::object();
      payload.set("reason", "condition is false");
      std::vector<memory::NewEvent> evs;
      evs.push_back(event(et::kStepSkipped, path, 0, std::move(payload)));
      auto c = commit(std::move(evs));
      base::Status st = co_await std::move(c);
      Outcome o;
      o.kind = Outcome::Kind::kSkipped;
      if (!st.ok()) o = Outcome::fail("unavailable", st.message());
      scope.steps.set(step.id, step_record(o));
      co_return o;
    }
  }
  const workflows::RetryPolicy policy = step.retry.value_or(workflows::RetryPolicy{});
  const int max_attempts = std::max(1, policy.max_attempts);
  double delay_ms = static_cast<double>(policy.backoff_ms);
  Outcome o;
  for (int64_t attempt = 1; attempt <= max_attempts; ++attempt) {
    if (cancelled()) co_return Outcome::cancelled();
    std::vector<memory::NewEvent> pending;
    if (!recorded(path, attempt, et::kStepStarted, 0)) {
      Json payload = Json::object();
      payload.set("kind", workflows::step_kind_name(step.kind));
      pending.push_back(event(et::kStepStarted, path, attempt, std::move(payload)));
      auto c = commit(std::move(pending));
      base::Status st = co_await std::move(c);
      pending.clear();
      if (!st.ok()) co_return Outcome::fail("unavailable", st.message());
    }
    bool replayed_failure = false;
    if (const auto* failed = recorded(path, attempt, et::kStepFailed, 0)) {
      const Json* err = failed->payload.find("error");
      const Json* code = err ? err->find("code") : nullptr;
      const Json* msg = err ? err->find("message") : nullptr;
      o = Outcome::fail(code && code->is_string() ? code->as_string() : "any",
                        msg && msg->is_string() ? msg->as_string() : "failed");
      replayed_failure = true;
    } else {
      Deadline d = deadline;
      if (step.timeout_ms) d = std::min(d, Clock::now() + std::chrono::milliseconds(*step.timeout_ms));
      try {
        auto body = run_body(step, scope, path, attempt, d, pending);
        o = co_await std::move(body);
      } catch (...) {
        o = outcome_from_exception(std::current_exception());
      }
      if (o.kind == Outcome::Kind::kFailed && o.error_kind != "timeout" && Clock::now() >= d && d != deadline) {
        o.error_kind = "timeout";
      }
      if (cancelled() || o.kind == Outcome::Kind::kCancelled) co_return Outcome::cancelled();
      if (o.kind == Outcome::Kind::kOk) {
        Json payload = Json::object();
        payload.set("output", o.output);
        pending.push_back(event(et::kStepCompleted, path, attempt, std::move(payload)));
      } else {
        Json payload = Json::object();
        payload.set("error", error_json(o));
        payload.set("retryable", attempt < max_attempts && retry_applies(policy, o.error_kind));
        pending.push_back(event(et::kStepFailed, path, attempt, std::move(payload)));
      }
      auto c = commit(std::move(pending));
      base::Status st = co_await std::move(c);
      if (!st.ok()) co_return Outcome::fail("unavailable", st.message());
    }
    if (o.kind == Outcome::Kind::kOk) break;
    if (attempt >= max_attempts || !retry_applies(policy, o.error_kind)) break;
    if (!replayed_failure && !strict_replay()) {  // a strict replay serves results at once
      auto ex = co_await asio::this_coro::executor;
      asio::steady_timer timer(ex);
      timer.expires_after(std::chrono::milliseconds(static_cast<int64_t>(delay_ms)));
      boost::system::error_code ec;
      auto wait = timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      co_await std::move(wait);
    }
    delay_ms *= policy.multiplier;
  }
  if (o.kind == Outcome::Kind::kFailed) {
    o.message = "step '" + path + "': " + o.message;
    o.continued = step.continue_on_error;
  }
  scope.steps.set(step.id, step_record(o));
  co_return o;
}

asio::awaitable<Outcome> RunContext::run_body(const Step& step, Scope& scope, const std::string& path,
                                              int64_t attempt, Deadline deadline,
                                              std::vector<memory::NewEvent>& pending) {
  // Children of a retried container get distinct paths so resume never mixes attempts.
  const std::string child = attempt > 1 ? path + "@" + std::to_string(attempt) : path;
  if (const auto* t = std::get_if<workflows::ToolStep>(&step.kind)) {
    auto r = run_tool(step, *t, scope, path, attempt, deadline, pending);
    co_return co_await std::move(r);
  }
  if (const auto* a = std::get_if<workflows::AgentStep>(&step.kind)) {
    auto r = run_agent(step, *a, scope, path, attempt, deadline, pending);
    co_return co_await std::move(r);
  }
  if (const auto* s = std::get_if<workflows::SetStep>(&step.kind)) {
    Json out = Json::object();
    workflows::EvalContext ctx = eval_context(scope);
    for (const auto& [name, value] : s->values) {
      auto v = workflows::evaluate_value(value, ctx);
      if (!v.ok()) co_return Outcome::fail("any", "set." + name + ": " + v.status().message());
      out.set(name, std::move(v).value());
    }
    co_return Outcome::ok(std::move(out));
  }
  if (const auto* i = std::get_if<workflows::IfStep>(&step.kind)) {
    bool take_then = true;
    if (step.condition) {
      auto v = workflows::render(*step.condition, eval_context(scope));
      if (!v.ok()) co_return Outcome::fail("any", "if: " + v.status().message());
      take_then = workflows::truthy(*v);
    }
    auto r = run_steps(take_then ? i->then_steps : i->else_steps, scope, child, deadline);
    co_return co_await std::move(r);
  }
  if (const auto* f = std::get_if<workflows::ForEachStep>(&step.kind)) {
    auto r = run_for_each(*f, scope, child, deadline);
    co_return co_await std::move(r);
  }
  if (const auto* r = std::get_if<workflows::RepeatUntilStep>(&step.kind)) {
    auto op = run_repeat(*r, scope, child, deadline);
    co_return co_await std::move(op);
  }
  const auto& p = std::get<workflows::ParallelStep>(step.kind);
  auto op = run_parallel(p, scope, child, deadline);
  co_return co_await std::move(op);
}

asio::awaitable<RunOutcome> execute_run(RunRequest request, RuntimeServices services) {
  auto ctx = std::make_shared<RunContext>(std::move(request), std::move(services));
  co_await asio::this_coro::throw_if_cancelled(false);
  auto r = ctx->run();
  RunOutcome outcome = co_await std::move(r);
  ctx->stop_heartbeat();
  if (outcome.left_resumable && !ctx->lease_owner().empty() &&
      outcome.status.code() == base::Code::kUnavailable) {
    // The store gave up: hand the lease back if it lets us, so a resume need not wait for expiry.
    auto store = ctx->services().store;
    auto op = offload_boxed<base::Status>(ctx->services().db, [store, id = outcome.run_id, owner = ctx->lease_owner()] {
      return store->release_lease(id, owner);
    });
    auto box = co_await std::move(op);
    (void)box;
  }
  co_return outcome;
}

}  // namespace dloop::runtime
