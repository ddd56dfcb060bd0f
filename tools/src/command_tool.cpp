// Command tools: JSON on stdin, JSON on stdout. See command_tool.h.
#include "dloop/tools/command_tool.h"

#include "dloop/base/strings.h"
#include "dloop/tools/process.h"
#include "with_config.h"

extern char** environ;

namespace dloop::tools {
namespace {

struct Config {
  std::vector<std::string> argv;
  int64_t timeout_ms = 0;
  std::vector<std::pair<std::string, std::string>> env;
  bool inherit_env = true;
  std::filesystem::path cwd;  // empty: the call's workspace
  int64_t max_output = 0;
};

ToolResult fail(ToolErrorKind kind, std::string message) { return ToolResult::failure(kind, std::move(message)); }

std::string excerpt(std::string_view s, size_t max) {
  s = base::trim(s);
  std::string out = to_valid_utf8(s.substr(0, max));
  return s.size() > max ? out + "..." : out;
}

class CommandTool final : public Tool {
 public:
  CommandTool(std::string name, std::string description, base::Schema parameters, Config cfg)
      : Tool(std::move(name), std::move(description), std::move(parameters)), cfg_(std::move(cfg)) {}

  asio::awaitable<ToolResult> invoke(Json args, ToolContext ctx) override {
    ProcessSpec spec;
    spec.argv = cfg_.argv;
    spec.stdin_data = args.dump() + "\n";
    if (cfg_.inherit_env) {
      spec.env.emplace();
      for (char** e = environ; *e != nullptr; ++e) {
        std::string_view entry(*e);
        std::string_view key = entry.substr(0, entry.find('='));
        bool overridden = false;
        for (const auto& [k, v] : cfg_.env) overridden = overridden || k == key;
        if (!overridden) spec.env->emplace_back(entry);
      }
    } else {
      spec.env.emplace();
    }
    for (const auto& [k, v] : cfg_.env) spec.env->push_back(k + "=" + v);
    spec.env->push_back("DLOOP_TOOL=" + name());
    spec.cwd = cfg_.cwd.empty() ? ctx.workspace : cfg_.cwd;
    spec.deadline = std::min(ctx.deadline, Clock::now() + std::chrono::milliseconds(cfg_.timeout_ms));
    spec.max_stdout_bytes = static_cast<size_t>(cfg_.max_output);

    auto op = run_process(std::move(spec));
    auto ran = co_await std::move(op);
    if (!ran.ok()) co_return fail(ToolErrorKind::kFailed, "'" + name() + "': " + ran.status().message());
    const ProcessResult& r = *ran;
    const std::string who = "'" + name() + "' ";
    switch (r.end) {
      case ProcessResult::End::kTimedOut: co_return fail(ToolErrorKind::kTimeout, who + describe_end(r) + stderr_excerpt(r));
      case ProcessResult::End::kSignaled: co_return fail(ToolErrorKind::kCrashed, who + describe_end(r) + stderr_excerpt(r));
      case ProcessResult::End::kOutputTooLarge:
        co_return fail(ToolErrorKind::kOutputTooLarge, who + describe_end(r) + stderr_excerpt(r));
      case ProcessResult::End::kCancelled: co_return fail(ToolErrorKind::kCancelled, who + describe_end(r));
      case ProcessResult::End::kExited: break;
    }
    if (r.exit_code != 0) co_return fail(ToolErrorKind::kFailed, who + describe_end(r) + stderr_excerpt(r));
    if (base::trim(r.stdout_data).empty()) {
      co_return fail(ToolErrorKind::kCrashed, who + "printed nothing on stdout (expected one JSON value)" + stderr_excerpt(r));
    }
    auto value = Json::parse(r.stdout_data);
    if (!value.ok()) {
      co_return fail(ToolErrorKind::kCrashed, who + "printed invalid JSON on stdout (" + value.status().message() +
                                                  "); stdout starts: " + excerpt(r.stdout_data, 200) + stderr_excerpt(r));
    }
    co_return ToolResult::success(std::move(value).value());
  }

 private:
  Config cfg_;
};

}  // namespace

base::Result<std::shared_ptr<Tool>> make_command_tool(const Json& decl, const std::filesystem::path& base_dir) {
  if (!decl.is_object()) return base::invalid_argument("a command tool must be a mapping");
  const Json* name_json = decl.find("name");
  if (!name_json || !name_json->is_string() || name_json->as_string().empty()) {
    return base::invalid_argument("a command tool needs a name");
  }
  const std::string name = name_json->as_string();
  // The declaration's keys, checked like a built-in's `with:` (same messages).
  DLOOP_ASSIGN_OR_RETURN(auto d, WithConfig::open(name, decl, {"name", "description", "command", "parameters", "timeout",
                                                               "env", "inherit_env", "cwd", "max_output_bytes"},
                                                   WithConfig::Section::kDeclaration));
  Config cfg;
  const Json* command = decl.find("command");
  if (command && command->is_string()) {
    return base::invalid_argument(name + ": command must be a list (argv), e.g. [./lookup.sh, --verbose]; it is "
                                         "never run through a shell");
  }
  DLOOP_ASSIGN_OR_RETURN(cfg.argv, d.get_string_list("command"));
  if (cfg.argv.empty()) return base::invalid_argument(name + ": command is required (an argv list)");
  if (cfg.argv[0].find('/') != std::string::npos && cfg.argv[0][0] != '/') {
    cfg.argv[0] = (base_dir / cfg.argv[0]).lexically_normal().string();
  }
  const Json* params = decl.find("parameters");
  if (!params) return base::invalid_argument(name + ": parameters is required (an object JSON Schema)");
  auto schema = base::Schema::compile(*params);
  if (!schema.ok()) return schema.status().with_context(name + ": parameters");
  if (schema->root().types != base::kSchemaObject) {
    return base::invalid_argument(name + ": parameters must be an object schema (type: object)");
  }
  DLOOP_ASSIGN_OR_RETURN(auto description, d.get_string("description"));
  DLOOP_ASSIGN_OR_RETURN(cfg.timeout_ms, d.get_duration_ms("timeout", 30'000));
  DLOOP_ASSIGN_OR_RETURN(cfg.env, d.get_string_map("env"));
  DLOOP_ASSIGN_OR_RETURN(cfg.inherit_env, d.get_bool("inherit_env", true));
  DLOOP_ASSIGN_OR_RETURN(auto cwd, d.get_string("cwd"));
  if (cwd) cfg.cwd = (*cwd)[0] == '/' ? std::filesystem::path(*cwd) : base_dir / *cwd;
  DLOOP_ASSIGN_OR_RETURN(cfg.max_output, d.get_int("max_output_bytes", 1 << 20, 1, int64_t{1} << 30));
  return std::shared_ptr<Tool>(std::make_shared<CommandTool>(
      name, description.value_or("Runs " + cfg.argv[0]), std::move(schema).value(), std::move(cfg)));
}

}  // namespace dloop::tools
