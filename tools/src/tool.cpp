// ToolResult, error kind names and the log helper. See tool.h.
#include "dloop/tools/tool.h"

#include "dloop/base/assert.h"

namespace dloop::tools {

const char* tool_error_kind_name(ToolErrorKind kind) {
  switch (kind) {
    case ToolErrorKind::kInvalidArguments: return "invalid_arguments";
    case ToolErrorKind::kTimeout: return "timeout";
    case ToolErrorKind::kFailed: return "failed";
    case ToolErrorKind::kCrashed: return "crashed";
    case ToolErrorKind::kOutputTooLarge: return "output_too_large";
    case ToolErrorKind::kDenied: return "denied";
    case ToolErrorKind::kCancelled: return "cancelled";
  }
  return "failed";
}

ToolResult ToolResult::success(Json value) {
  ToolResult r;
  r.v_ = std::move(value);
  return r;
}

ToolResult ToolResult::failure(ToolErrorKind kind, std::string message) {
  ToolResult r;
  r.v_ = ToolError{kind, std::move(message)};
  return r;
}

const Json& ToolResult::value() const {
  DLOOP_ASSERT_MSG(ok(), "value() of a failed ToolResult");
  return std::get<0>(v_);
}

const ToolError& ToolResult::error() const {
  DLOOP_ASSERT_MSG(!ok(), "error() of a successful ToolResult");
  return std::get<1>(v_);
}

Json ToolResult::to_json() const {
  if (ok()) return value();
  Json inner = Json::object();
  inner.set("kind", tool_error_kind_name(error().kind));
  inner.set("message", error().message);
  Json out = Json::object();
  out.set("error", std::move(inner));
  return out;
}

void tool_log(const ToolContext& ctx, base::LogLevel level, std::string_view tool, std::string_view message) {
  if (ctx.log) {
    ctx.log(level, tool, message);
    return;
  }
  if (base::log_enabled(level)) {
    std::string line = "tool ";
    line += tool;
    line += ": ";
    line += message;
    base::log_line(level, line);
  }
}

base::Schema builtin_schema(std::string_view json_text) {
  auto json = Json::parse(json_text);
  DLOOP_ASSERT_MSG(json.ok(), "a built-in tool's schema is not valid JSON");
  auto schema = base::Schema::compile(*json);
  DLOOP_ASSERT_MSG(schema.ok(), "a built-in tool's schema does not compile");
  return std::move(schema).value();
}

}  // namespace dloop::tools
