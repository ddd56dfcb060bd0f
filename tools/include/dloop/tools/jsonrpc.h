// JSON-RPC 2.0 messages as MCP's stdio transport frames them: one compact JSON object per line,
// UTF-8, no embedded newlines. parse_rpc_line() classifies a line (request, notification,
// response, error response) and says precisely what is wrong with one that is none of them;
// the rpc_* writers produce a line without its trailing newline. Used by the MCP client
// (tools/mcp/) and by `dloop mcp serve`. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "dloop/base/json.h"
#include "dloop/base/status.h"

namespace dloop::tools {

// JSON-RPC 2.0 error codes.
constexpr int64_t kRpcParseError = -32700;
constexpr int64_t kRpcInvalidRequest = -32600;
constexpr int64_t kRpcMethodNotFound = -32601;
constexpr int64_t kRpcInvalidParams = -32602;
constexpr int64_t kRpcInternalError = -32603;

struct RpcMessage {
  enum class Kind { kRequest, kNotification, kResult, kError };
  Kind kind = Kind::kNotification;
  base::Json id;          // string or integer; null for a notification (and an error without id)
  std::string method;     // requests and notifications
  base::Json params;      // requests and notifications; null when absent
  base::Json result;      // kResult
  int64_t error_code = 0; // kError
  std::string error_message;
  base::Json error_data;  // kError; null when absent
};

// Errors (invalid_argument): not JSON (with the byte offset), not an object, `jsonrpc` is not
// "2.0", or a shape that is neither a request, a notification nor a response.
base::Result<RpcMessage> parse_rpc_line(std::string_view line);

std::string rpc_request(const base::Json& id, std::string_view method, const base::Json& params);
std::string rpc_notification(std::string_view method, const base::Json& params);
std::string rpc_result(const base::Json& id, const base::Json& result);
std::string rpc_error(const base::Json& id, int64_t code, std::string_view message);

// The first `max` bytes of `text` as valid UTF-8 with "..." when cut: for error messages.
std::string rpc_excerpt(std::string_view text, size_t max = 200);

}  // namespace dloop::tools
