// The request side of POST /v1/chat/completions: parse_chat_request() turns a body into a
// validated ChatRequest (messages mapped onto the model's chat roles, tools as engine tool
// definitions, tool_choice, response_format, decoding knobs) or an ApiError that names the field
// ("messages[1].content", "tools[0].function.parameters") and, for bad JSON, the byte offset.
// Pure functions with no I/O, so the unit tests and the fuzz target call them directly.
// docs/server.md lists every field. Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/engine/chat.h"
#include "dloop/engine/tool_call.h"
#include "dloop/server/api_error.h"

namespace dloop::server {

enum class ResponseFormat { kText, kJsonObject, kJsonSchema };

struct ChatRequest {
  std::string model;
  std::vector<engine::ChatMessage> messages;   // developer -> system; assistant tool_calls as call text
  std::vector<engine::ToolDefinition> tools;   // after an allowed_tools tool_choice narrowed them
  engine::ToolChoice tool_choice;              // default: none without tools, auto with tools
  bool parallel_tool_calls = true;             // accepted; the engine returns one call per turn
  ResponseFormat format = ResponseFormat::kText;
  std::optional<base::Json> schema;            // json_schema: the schema; json_object: {"type":"object"}
  std::string schema_name;
  int64_t max_completion_tokens = 0;           // 0: the default canvas (kDefaultCompletionTokens)
  double temperature = 0.0;                    // 0 = greedy (dloop's default, unlike OpenAI's 1)
  double top_p = 1.0;
  std::optional<uint64_t> seed;
  engine::ReasoningEffort effort = engine::ReasoningEffort::kLow;
  std::vector<std::string> stop;               // up to 4 stop sequences
  bool stream = false;
  bool include_usage = false;                  // stream_options.include_usage
  bool diffusing = false;                      // stream intermediate canvases (stream only)
};

constexpr int64_t kDefaultCompletionTokens = 96;   // the bundled model's training canvas
constexpr int64_t kMaxCompletionTokens = 4096;

struct ParseLimits {
  size_t max_messages = 1024;
  size_t max_tools = 128;
  size_t max_depth = 64;  // JSON nesting
};

// Errors: 400 invalid_request_error with `param` naming the field. The model name is not checked
// here (the server answers 404 for an unknown one).
std::variant<ChatRequest, ApiError> parse_chat_request(std::string_view body, const ParseLimits& limits = {});

// The body parsed as a JSON object, or a 400 naming the byte offset, line and column of the
// first syntax error (bad UTF-8 included).
std::variant<base::Json, ApiError> parse_json_body(std::string_view body, size_t max_depth = 64);

// The text a message's tool calls render to for the model: one
// <tool_call>{"name": N, "arguments": ARGS}</tool_call> per call, joined by "\n".
std::string tool_call_text(const std::string& name, const std::string& arguments_json);

}  // namespace dloop::server
