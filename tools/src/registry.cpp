// Registry and invoke_validated(). See registry.h.
#include "dloop/tools/registry.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "dloop/base/strings.h"

namespace dloop::tools {
namespace {

bool valid_tool_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string seconds(Clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", std::chrono::duration<double>(d).count());
  return buf;
}

}  // namespace

base::Status Registry::add(std::shared_ptr<Tool> tool) {
  DLOOP_ASSERT(tool != nullptr);
  const std::string& name = tool->name();
  if (!valid_tool_name(name)) {
    return base::invalid_argument("tool name '" + name + "' must be 1-64 characters of A-Z a-z 0-9 _ -");
  }
  const auto& root = tool->parameters().root();
  if (root.reject_all || root.types != base::kSchemaObject) {
    return base::invalid_argument("tool '" + name + "': parameters must be an object schema ({\"type\": \"object\", ...})");
  }
  if (index_.count(name) != 0) {
    return base::invalid_argument("tool '" + name + "' is already registered; tool names must be unique (rename one)");
  }
  index_.emplace(name, tools_.size());
  tools_.push_back(std::move(tool));
  return base::Status();
}

std::shared_ptr<Tool> Registry::find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : tools_[it->second];
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& t : tools_) out.push_back(t->name());
  return out;
}

base::Result<Registry> Registry::subset(const std::vector<std::string>& names) const {
  Registry out;
  for (const auto& name : names) {
    auto tool = find(name);
    if (!tool) {
      std::string msg = "unknown tool '" + name + "'";
      if (auto guess = base::closest_match(name, this->names())) msg += " (did you mean '" + *guess + "'?)";
      return base::not_found(msg + "; available: " + join(this->names()));
    }
    DLOOP_RETURN_IF_ERROR(out.add(std::move(tool)));
  }
  return out;
}

Json Registry::describe() const {
  Json out = Json::array();
  for (const auto& t : tools_) {
    Json entry = Json::object();
    entry.set("name", t->name());
    entry.set("description", t->description());
    entry.set("parameters", t->parameters().json());
    out.push_back(std::move(entry));
  }
  return out;
}

Json Registry::openai_tools() const {
  Json out = Json::array();
  Json described = describe();  // named: a range-for over describe().as_array() would dangle
  for (Json& fn : described.as_array()) {
    Json entry = Json::object();
    entry.set("type", "function");
    entry.set("function", std::move(fn));
    out.push_back(std::move(entry));
  }
  return out;
}

asio::awaitable<ToolResult> Registry::invoke(std::string name, Json args, ToolContext ctx, InvokeLimits limits) const {
  auto tool = find(name);
  if (!tool) {
    std::string msg = "there is no tool named '" + name + "'";
    if (auto guess = base::closest_match(name, names())) msg += " (did you mean '" + *guess + "'?)";
    co_return ToolResult::failure(ToolErrorKind::kInvalidArguments, msg + "; available tools: " + join(names()));
  }
  auto call = invoke_validated(std::move(tool), std::move(args), std::move(ctx), limits);
  co_return co_await std::move(call);
}

asio::awaitable<ToolResult> invoke_validated(std::shared_ptr<Tool> tool, Json args, ToolContext ctx,
                                             InvokeLimits limits) {
  DLOOP_ASSERT(tool != nullptr);
  const std::string name = tool->name();
  ToolResult result;
  try {
    auto problems = tool->parameters().validate_all(args, limits.max_argument_errors);
    if (!problems.empty()) {
      std::string msg = "arguments do not match the parameters of '" + name + "': ";
      for (size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i].to_string();
      co_return ToolResult::failure(ToolErrorKind::kInvalidArguments, msg);
    }
    const auto start = Clock::now();
    if (start >= ctx.deadline) {
      co_return ToolResult::failure(ToolErrorKind::kTimeout, "'" + name + "' was not started: its deadline had passed");
    }
    if (ctx.deadline == Clock::time_point::max()) {
      auto call = tool->invoke(std::move(args), std::move(ctx));
      result = co_await std::move(call);
    } else {
      auto ex = co_await asio::this_coro::executor;
      asio::steady_timer timer(ex, ctx.deadline);
      // The loser is cancelled and awaited: when this returns the tool has stopped.
      // Built in named steps: GCC 12 mishandles class temporaries inside co_await (blocking.h).
      auto call = tool->invoke(std::move(args), ctx);
      auto group = asio::experimental::make_parallel_group(asio::co_spawn(ex, std::move(call), asio::deferred),
                                                           timer.async_wait(asio::deferred));
      auto race = std::move(group).async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
      auto [order, thrown, tool_result, timer_ec] = co_await std::move(race);
      if (order[0] == 1 && !timer_ec) {
        co_return ToolResult::failure(ToolErrorKind::kTimeout,
                                      "'" + name + "' did not finish within " + seconds(Clock::now() - start) +
                                          " and was stopped");
      }
      if (thrown) std::rethrow_exception(thrown);
      result = std::move(tool_result);
    }
  } catch (const std::exception& e) {
    co_return ToolResult::failure(ToolErrorKind::kCrashed, "'" + name + "' failed unexpectedly: " + e.what());
  } catch (...) {
    co_return ToolResult::failure(ToolErrorKind::kCrashed, "'" + name + "' failed unexpectedly");
  }
  if (result.ok()) {
    size_t size = result.value().dump().size();
    if (size > limits.max_output_bytes) {
      co_return ToolResult::failure(ToolErrorKind::kOutputTooLarge,
                                    "the result of '" + name + "' is " + std::to_string(size) +
                                        " bytes, over the cap of " + std::to_string(limits.max_output_bytes) +
                                        " bytes; ask for less (a smaller range or a narrower query)");
    }
  }
  co_return result;
}

}  // namespace dloop::tools
