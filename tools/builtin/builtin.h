// Private: what every built-in tool file shares: the factory signature and small helpers. Each
// tools/builtin/<name>.cpp defines builtin::make_<name>() and is listed once in builtins.cpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "dloop/tools/builtins.h"
#include "dloop/tools/tool.h"
#include "src/with_config.h"

namespace dloop::tools::builtin {

using Factory = base::Result<std::shared_ptr<Tool>> (*)(const BuiltinSpec& spec, const BuiltinEnv& env);

inline std::string name_of(const BuiltinSpec& spec) { return spec.name.empty() ? spec.use : spec.name; }
inline std::string description_of(const BuiltinSpec& spec, std::string_view fallback) {
  return spec.description.empty() ? std::string(fallback) : spec.description;
}

inline ToolResult fail(ToolErrorKind kind, std::string message) {
  return ToolResult::failure(kind, std::move(message));
}

// Optional arguments, already validated against the schema. An integer argument may arrive as an
// integral double (3.0): the schema's `integer` admits it.
inline int64_t int_arg(const Json& args, std::string_view key, int64_t fallback) {
  const Json* v = args.find(key);
  if (v == nullptr || !v->is_number()) return fallback;
  if (v->is_int()) return v->as_int();
  double d = v->as_double();
  return d >= 9.0e18 ? INT64_MAX : d <= -9.0e18 ? INT64_MIN : static_cast<int64_t>(d);
}
inline bool bool_arg(const Json& args, std::string_view key, bool fallback) {
  const Json* v = args.find(key);
  return v != nullptr && v->is_bool() ? v->as_bool() : fallback;
}
inline std::string string_arg(const Json& args, std::string_view key, std::string fallback = "") {
  const Json* v = args.find(key);
  return v != nullptr && v->is_string() ? v->as_string() : fallback;
}

// The effective deadline for a call: the context's, or now + timeout_ms, whichever is first.
inline Clock::time_point deadline_for(const ToolContext& ctx, int64_t timeout_ms) {
  return std::min(ctx.deadline, Clock::now() + std::chrono::milliseconds(timeout_ms));
}

}  // namespace dloop::tools::builtin
