// The table of built-in tools. To add one: write tools/builtin/<name>.cpp defining
// builtin::make_<name>(), then add X(<name>) to the list below.
#include "dloop/tools/builtins.h"

#include <utility>

#include "builtin/builtin.h"
#include "dloop/base/strings.h"

#define DLOOP_BUILTIN_TOOLS(X) \
  X(calculator)                \
  X(file_read)                 \
  X(file_write)                \
  X(file_list)                 \
  X(http_request)              \
  X(sqlite_query)              \
  X(shell)                     \
  X(memory_get)                \
  X(memory_put)                 \
  X(retrieve)

namespace dloop::tools {
namespace builtin {
#define DLOOP_DECLARE_BUILTIN_(name) \
  base::Result<std::shared_ptr<Tool>> make_##name(const BuiltinSpec& spec, const BuiltinEnv& env);
DLOOP_BUILTIN_TOOLS(DLOOP_DECLARE_BUILTIN_)
#undef DLOOP_DECLARE_BUILTIN_
}  // namespace builtin

namespace {
#define DLOOP_BUILTIN_ENTRY_(name) {#name, &builtin::make_##name},
const std::pair<const char*, builtin::Factory> kBuiltins[] = {DLOOP_BUILTIN_TOOLS(DLOOP_BUILTIN_ENTRY_)};
#undef DLOOP_BUILTIN_ENTRY_
}  // namespace

std::vector<std::string> builtin_names() {
  std::vector<std::string> out;
  for (const auto& [name, factory] : kBuiltins) out.emplace_back(name);
  return out;
}

base::Result<std::shared_ptr<Tool>> make_builtin(const BuiltinSpec& spec, const BuiltinEnv& env) {
  for (const auto& [name, factory] : kBuiltins) {
    if (spec.use == name) return factory(spec, env);
  }
  std::string msg = "unknown built-in tool '" + spec.use + "'";
  if (auto guess = base::closest_match(spec.use, builtin_names())) msg += " (did you mean '" + *guess + "'?)";
  std::string list;
  for (const auto& n : builtin_names()) list += (list.empty() ? "" : ", ") + n;
  return base::invalid_argument(msg + "; built-ins: " + list);
}

}  // namespace dloop::tools
