// The Tool interface: what an agent step calls. A tool has a name, a description and a parameters
// JSON Schema (compiled; its root is an object schema), and an invoke() coroutine that runs on the
// caller's Asio executor and never blocks it: blocking work (files, SQLite) goes to the context's
// thread pool (run_blocking in blocking.h), processes and sockets are awaited asynchronously.
// A result is a JSON value or a ToolError that the model sees as {"error": {"kind", "message"}}.
//
// Callers normally go through invoke_validated() (registry.h), which validates the arguments
// against the schema first, enforces the deadline and the output cap, and turns any exception
// into a `crashed` error. Cancellation is Asio's per-operation cancellation: cancel the slot bound
// to the awaiting coroutine (co_spawn with bind_cancellation_slot, or an awaitable `||`) and the
// tool's pending operation aborts; tools then clean up (kill the process group, interrupt the
// query) and return a `cancelled` error.
//
// Thread-safety: a Tool is shared by every run; invoke() may run concurrently from many
// coroutines, and its blocking parts on pool threads, so tools keep only immutable configuration.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <variant>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "dloop/base/json.h"
#include "dloop/base/json_schema.h"
#include "dloop/base/log.h"
#include "dloop/base/status.h"

namespace dloop::tools {

namespace asio = boost::asio;
using base::Json;
using Clock = std::chrono::steady_clock;

enum class ToolErrorKind {
  kInvalidArguments,  // arguments do not match the schema, or make no sense ("1/0", no such file)
  kTimeout,           // the deadline passed; the work was stopped
  kFailed,            // the tool ran and reported failure (exit status 1, HTTP connect error)
  kCrashed,           // the tool died: killed by a signal, threw, bad output protocol
  kOutputTooLarge,    // the result (or a process's stdout, an HTTP body) passed its cap
  kDenied,            // refused by configuration: path outside the workspace, host not allowed
  kCancelled,         // the run is stopping; not normally shown to the model
};

// "invalid_arguments", "timeout", "failed", "crashed", "output_too_large", "denied", "cancelled".
const char* tool_error_kind_name(ToolErrorKind kind);

struct ToolError {
  ToolErrorKind kind = ToolErrorKind::kFailed;
  std::string message;  // for the model: says what went wrong and, where it helps, what to do
};

class ToolResult {
 public:
  ToolResult() = default;  // ok, null
  static ToolResult success(Json value);
  static ToolResult failure(ToolErrorKind kind, std::string message);

  bool ok() const { return v_.index() == 0; }
  const Json& value() const;        // requires ok()
  const ToolError& error() const;   // requires !ok()
  // What the model sees: the value, or {"error": {"kind": "timeout", "message": "..."}}.
  Json to_json() const;

 private:
  std::variant<Json, ToolError> v_;
};

// Where log lines from tools go: (level, tool name, message). Empty: dloop's stderr log.
using LogSink = std::function<void(base::LogLevel, std::string_view tool, std::string_view message)>;

// Per-call environment, passed by value (cheap: two executors, a path, two strings, a function).
struct ToolContext {
  // A thread pool's executor (asio::thread_pool::get_executor()) for blocking work. Required by
  // the tools that block (file_*, sqlite_query, memory_*); the runtime owns the pool.
  asio::any_io_executor blocking;
  // After this the call is stopped and reported as a timeout (invoke_validated enforces it).
  Clock::time_point deadline = Clock::time_point::max();
  // Absolute root for file tools and the working directory of processes. Empty: the process's
  // current directory.
  std::filesystem::path workspace;
  // Namespace of the per-workflow KV memory (memory_get/memory_put): the workflow's name.
  std::string scope;
  LogSink log;
};

// Writes one log line through ctx.log, or dloop's log when it is empty.
void tool_log(const ToolContext& ctx, base::LogLevel level, std::string_view tool, std::string_view message);

class Tool {
 public:
  // `parameters` must be an object schema (`type: object`); Registry::add checks it.
  Tool(std::string name, std::string description, base::Schema parameters)
      : name_(std::move(name)), description_(std::move(description)), parameters_(std::move(parameters)) {}
  virtual ~Tool() = default;
  Tool(const Tool&) = delete;
  Tool& operator=(const Tool&) = delete;

  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const base::Schema& parameters() const { return parameters_; }

  // Runs the tool on arguments already valid for parameters(). Awaited on the caller's executor;
  // must not block it and must not throw (invoke_validated turns an exception into `crashed`).
  virtual asio::awaitable<ToolResult> invoke(Json args, ToolContext ctx) = 0;

 private:
  std::string name_;
  std::string description_;
  base::Schema parameters_;
};

// Compiles a schema written as JSON text (for tools' own constant schemas); a bad schema is a bug.
base::Schema builtin_schema(std::string_view json_text);

}  // namespace dloop::tools
