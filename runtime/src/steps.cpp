// Tool steps and the container steps (for_each, repeat_until, parallel). A tool step's call, its
// result and the step's end are one transaction (with step_completed or step_failed, committed by
// run_step), so a resumed run sees either all of an attempt or none of it. Loop iterations and
// parallel branches are co_spawned coroutines with their own scope, joined with a parallel group.
#include <algorithm>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/this_coro.hpp>

#include "run_context.h"

namespace dloop::runtime {

namespace et = memory::event_type;
using workflows::Step;

asio::awaitable<Outcome> RunContext::run_tool(const Step& step, const workflows::ToolStep& tool, Scope& scope,
                                              const std::string& path, int64_t attempt, Deadline deadline,
                                              std::vector<memory::NewEvent>& pending) {
  (void)step;
  auto args = workflows::evaluate_value(tool.args, eval_context(scope));
  if (!args.ok()) co_return Outcome::fail("any", "args: " + args.status().message());
  Json arguments = args->is_null() ? Json::object() : std::move(args).value();
  if (!arguments.is_object()) co_return Outcome::fail("any", "args must be an object, got " + arguments.dump());
  const std::string call_id = path + "#" + std::to_string(attempt);
  memory::NewEvent call;
  call.type = std::string(et::kToolCall);
  call.step_path = path;
  call.attempt = attempt;
  call.payload.set("id", call_id);
  call.payload.set("name", tool.tool);
  call.payload.set("arguments", arguments);
  pending.push_back(std::move(call));

  const auto start = Clock::now();
  const int64_t started_ms = unix_ms_now();
  auto op = call_tool(&registry_, path, attempt, 0, 0, tool.tool, std::move(arguments), tool_context(deadline));
  tools::ToolResult result = co_await std::move(op);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (!result.ok() && result.error().kind == tools::ToolErrorKind::kCancelled) co_return Outcome::cancelled();

  memory::NewEvent res;
  res.type = std::string(et::kToolResult);
  res.step_path = path;
  res.attempt = attempt;
  res.payload.set("id", call_id);
  res.payload.set("name", tool.tool);
  if (result.ok()) {
    res.payload.set("result", result.value());
  } else {
    Json e = Json::object();
    e.set("code", tools::tool_error_kind_name(result.error().kind));
    e.set("message", result.error().message);
    res.payload.set("error", std::move(e));
  }
  res.payload.set("ms", ms);
  res.payload.set("started_ms", started_ms);
  pending.push_back(std::move(res));
  if (result.ok()) co_return Outcome::ok(result.value());
  const bool timeout = result.error().kind == tools::ToolErrorKind::kTimeout;
  co_return Outcome::fail(timeout ? "timeout" : "tool_error",
                          std::string(tools::tool_error_kind_name(result.error().kind)) + ": " +
                              result.error().message);
}

asio::awaitable<Outcome> RunContext::run_isolated(const std::vector<Step>* steps, Scope scope, std::string prefix,
                                                  Deadline deadline) {
  co_await asio::this_coro::throw_if_cancelled(false);
  auto r = run_steps(*steps, scope, prefix, deadline);
  co_return co_await std::move(r);
}

asio::awaitable<Outcome> RunContext::run_branch(const Step* step, Scope scope, std::string prefix,
                                                Deadline deadline) {
  co_await asio::this_coro::throw_if_cancelled(false);
  auto r = run_step(*step, scope, prefix, deadline);
  co_return co_await std::move(r);
}

namespace {

// Awaits every op; a coroutine that threw becomes a failed Outcome. Results in op order.
template <typename Ops>
asio::awaitable<std::vector<Outcome>> join_all(Ops ops) {
  std::vector<Outcome> out(ops.size());
  if (ops.empty()) co_return out;
  auto group = asio::experimental::make_parallel_group(std::move(ops));
  auto wait = group.async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
  auto [order, errors, results] = co_await std::move(wait);
  (void)order;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = errors[i] ? outcome_from_exception(errors[i]) : std::move(results[i]);
  }
  co_return out;
}

using SpawnOp = decltype(asio::co_spawn(std::declval<asio::any_io_executor>(),
                                        std::declval<asio::awaitable<Outcome>>(), asio::deferred));

Outcome first_stop(std::vector<Outcome>& outs) {
  for (auto& o : outs) {
    if (o.kind == Outcome::Kind::kCancelled) return o;
  }
  for (auto& o : outs) {
    if (o.stops_run()) return o;
  }
  return Outcome::ok(Json());
}

}  // namespace

asio::awaitable<Outcome> RunContext::run_for_each(const workflows::ForEachStep& loop, Scope& scope,
                                                  const std::string& path, Deadline deadline) {
  auto items = workflows::evaluate_value(loop.items, eval_context(scope));
  if (!items.ok()) co_return Outcome::fail("any", "for_each: " + items.status().message());
  if (!items->is_array()) co_return Outcome::fail("any", "for_each: items is not a list: " + items->dump());
  const Json::Array list = items->as_array();
  const size_t width = static_cast<size_t>(std::max(1, loop.max_parallel));
  Json outputs = Json::array();
  auto ex = co_await asio::this_coro::executor;
  for (size_t begin = 0; begin < list.size(); begin += width) {
    if (cancelled()) co_return Outcome::cancelled();
    std::vector<SpawnOp> ops;
    for (size_t i = begin; i < std::min(list.size(), begin + width); ++i) {
      Scope iter = scope;
      iter.vars.emplace_back(loop.as, list[i]);
      iter.vars.emplace_back("index", static_cast<int64_t>(i));
      auto body = run_isolated(&loop.steps, std::move(iter), path + "[" + std::to_string(i) + "]", deadline);
      ops.push_back(asio::co_spawn(ex, std::move(body), asio::deferred));
    }
    auto join = join_all(std::move(ops));
    std::vector<Outcome> outs = co_await std::move(join);
    Outcome stop = first_stop(outs);
    if (stop.stops_run()) co_return stop;
    for (auto& o : outs) outputs.push_back(std::move(o.output));
  }
  co_return Outcome::ok(std::move(outputs));
}

asio::awaitable<Outcome> RunContext::run_repeat(const workflows::RepeatUntilStep& loop, Scope& scope,
                                                const std::string& path, Deadline deadline) {
  Outcome last = Outcome::ok(Json());
  for (int i = 0; i < loop.max_iterations; ++i) {
    if (cancelled()) co_return Outcome::cancelled();
    Scope iter = scope;
    iter.vars.emplace_back("index", static_cast<int64_t>(i));
    auto body = run_steps(loop.steps, iter, path + "[" + std::to_string(i) + "]", deadline);
    last = co_await std::move(body);
    if (last.stops_run()) co_return last;
    auto done = workflows::render(loop.until, eval_context(iter));
    if (!done.ok()) co_return Outcome::fail("any", "repeat_until: " + done.status().message());
    if (workflows::truthy(*done)) break;
  }
  co_return last;
}

asio::awaitable<Outcome> RunContext::run_parallel(const workflows::ParallelStep& par, Scope& scope,
                                                  const std::string& path, Deadline deadline) {
  auto ex = co_await asio::this_coro::executor;
  std::vector<SpawnOp> ops;
  for (const auto& branch : par.branches) {
    auto body = run_branch(&branch, scope, path, deadline);
    ops.push_back(asio::co_spawn(ex, std::move(body), asio::deferred));
  }
  auto join = join_all(std::move(ops));
  std::vector<Outcome> outs = co_await std::move(join);
  Outcome stop = first_stop(outs);
  if (stop.stops_run()) co_return stop;
  Json out = Json::object();
  for (size_t i = 0; i < outs.size(); ++i) {
    scope.steps.set(par.branches[i].id, step_record(outs[i]));
    out.set(par.branches[i].id, outs[i].kind == Outcome::Kind::kOk ? outs[i].output : Json());
  }
  co_return Outcome::ok(std::move(out));
}

}  // namespace dloop::runtime
