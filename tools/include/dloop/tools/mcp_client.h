// The MCP client: talks to one Model Context Protocol server over stdio (newline-delimited
// JSON-RPC 2.0; docs/mcp.md) and exposes its tools as dloop tools.
//
// Lifecycle: start() spawns the server (its own process group) and performs the handshake: it
// probes `server/discover` for the stateless protocol 2026-07-28 and, on an error or no answer
// within 5 s, falls back to `initialize` + `notifications/initialized` with 2025-11-25. Requests
// are sent one at a time (calls from parallel steps queue). A server that crashes, hangs past
// the timeout, writes a line that is not JSON-RPC, or writes a line over the cap is killed, the
// call fails with a tool error saying which of those happened (with the end of its stderr), and
// the next call starts it again. A JSON-RPC error response is a tool error too, but the server
// stays up. stderr lines go to the LogSink (the run's log). shutdown() closes stdin, waits, then
// sends SIGTERM and finally SIGKILL to the group; the destructor kills what is still running.
//
// Thread-safety: one client is used from one executor (the run's event loop); its tools may be
// invoked concurrently from coroutines on that executor.
#pragma once

#include <chrono>
#include <deque>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "dloop/base/json.h"
#include "dloop/base/status.h"
#include "dloop/tools/tool.h"

namespace dloop::tools {

// The newest protocol (stateless, probed with server/discover) and the handshake-era fallback.
constexpr const char* kMcpModernVersion = "2026-07-28";
constexpr const char* kMcpHandshakeVersion = "2025-11-25";

struct McpServerConfig {
  std::string label;               // for messages and logs, e.g. "mcp server at flow.yaml:12"
  std::vector<std::string> argv;   // the server program and its arguments (never a shell string)
  std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing in) dloop's environment
  std::filesystem::path cwd;       // empty: dloop's working directory
  std::chrono::milliseconds timeout{30'000};  // per request: handshake, tools/list, tools/call
  size_t max_message_bytes = 4 << 20;         // one line from the server; longer kills it
  std::string prefix;              // prepended to tool names ("fs_" + "read_file")
  std::vector<std::string> include;  // when non-empty: only these server tool names
  std::vector<std::string> exclude;  // never these server tool names
};

// One tool as the server lists it.
struct McpToolInfo {
  std::string name;         // the server's name
  std::string description;
  base::Json input_schema;  // as listed (an object schema)
};

class McpClient : public std::enable_shared_from_this<McpClient> {
 public:
  // `log` receives the server's stderr lines and protocol notes (tool = cfg.label); may be empty.
  static std::shared_ptr<McpClient> create(asio::any_io_executor executor, McpServerConfig config, LogSink log = {});
  ~McpClient();
  McpClient(const McpClient&) = delete;
  McpClient& operator=(const McpClient&) = delete;

  // Spawns the server and performs the handshake. Errors (unavailable) name the server and what
  // went wrong: cannot start, exited during the handshake, unsupported protocol version, timeout.
  asio::awaitable<base::Status> start();
  // tools/list, following nextCursor (at most 1000 pages). Requires a started server.
  asio::awaitable<base::Result<std::vector<McpToolInfo>>> list_tools();
  // tools/call; restarts the server first when it is not running. `isError: true` is a kFailed
  // error carrying the server's text; the others are described in the file comment.
  asio::awaitable<ToolResult> call_tool(std::string name, base::Json arguments, Clock::time_point deadline);
  // Ends the server gracefully (stdin closed, SIGTERM after 2 s, SIGKILL after 1 s more).
  asio::awaitable<void> shutdown();

  const McpServerConfig& config() const { return config_; }
  const std::string& protocol_version() const { return version_; }  // negotiated; "" before start
  const base::Json& server_info() const { return server_info_; }
  int starts() const { return starts_; }  // how many times the server was spawned
  bool running() const;

  struct Child;  // a spawned server process (private; defined in client.cpp)

 private:
  McpClient(asio::any_io_executor executor, McpServerConfig config, LogSink log);
  struct Reply;
  struct Held;  // RAII: releases the request lock
  asio::awaitable<Reply> request(std::string method, base::Json params, Clock::time_point deadline, bool kill_on_timeout);
  asio::awaitable<base::Status> start_locked();
  asio::awaitable<void> lock();
  void unlock();
  void kill_child(const std::string& why);
  base::Json with_meta(base::Json params) const;

  asio::any_io_executor executor_;
  McpServerConfig config_;
  LogSink log_;
  std::shared_ptr<Child> child_;
  std::string version_;
  bool modern_ = false;
  base::Json server_info_;
  int64_t next_id_ = 1;
  int starts_ = 0;
  bool busy_ = false;
  struct Waiter;
  std::deque<std::shared_ptr<Waiter>> waiters_;  // queued lock() callers, first come first served
};

// Starts `client` (when not running), lists its tools, applies include/exclude and the prefix,
// and returns one Tool per server tool; names that are not valid dloop tool names
// ([A-Za-z0-9_-]{1,64}) have the other characters replaced by '_'. An input schema outside
// dloop's JSON Schema subset loses the keywords dloop cannot check (the server still validates).
// Errors: the start or list failure, or an include name the server does not have.
asio::awaitable<base::Result<std::vector<std::shared_ptr<Tool>>>> make_mcp_tools(std::shared_ptr<McpClient> client);

// The tool result the model sees for a tools/call result object: {"text": joined text blocks}
// plus "structured" (structuredContent) and "content" (the non-text blocks, binary data
// replaced by its size) when present; `isError: true` becomes a kFailed error with the text.
ToolResult mcp_call_result(const base::Json& result, const std::string& tool_name);

}  // namespace dloop::tools
