// shell: runs one allowed program with an argv array (never through a shell, so no quoting,
// globbing or `;`), in the workspace, with a small environment, a timeout and an output cap.
// Off unless configured: `with: {allow: [programs]}` lists the exact argv[0] values permitted.
// Other `with:` keys: timeout (default 30s), max_output_bytes (stdout cap, default 64 KiB), env
// (extra variables), inherit_env (pass this process's whole environment; default false), cwd
// (relative to the workspace). Processes run through run_process (process.h).
#include <cstdlib>

#include "builtin/builtin.h"
#include "dloop/tools/process.h"

extern char** environ;

namespace dloop::tools::builtin {
namespace {

struct Config {
  std::vector<std::string> allow;
  int64_t timeout_ms = 0;
  int64_t max_output = 0;
  std::vector<std::pair<std::string, std::string>> env;
  bool inherit_env = false;
  std::optional<std::string> cwd;
};

std::vector<std::string> child_env(const Config& cfg) {
  std::vector<std::string> env;
  if (cfg.inherit_env) {
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
  } else {
    const char* path = std::getenv("PATH");
    env.push_back(std::string("PATH=") + (path ? path : "/usr/local/bin:/usr/bin:/bin"));
    if (const char* home = std::getenv("HOME")) env.push_back(std::string("HOME=") + home);
    env.push_back("LANG=C.UTF-8");
  }
  for (const auto& [k, v] : cfg.env) env.push_back(k + "=" + v);
  return env;
}

class Shell final : public Tool {
 public:
  Shell(const BuiltinSpec& spec, Config cfg)
      : Tool(name_of(spec),
             description_of(spec, "Runs a program with arguments (no shell syntax). Allowed programs: " +
                                      join(cfg.allow) + ". Returns {exit_code, stdout, stderr}."),
             builtin_schema(R"({"type": "object", "properties": {
                 "argv": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                          "description": "program and arguments, e.g. [\"ls\", \"-l\"]"},
                 "stdin": {"type": "string", "description": "text for the program's standard input"}},
               "required": ["argv"], "additionalProperties": false})")),
        cfg_(std::move(cfg)) {}

  asio::awaitable<ToolResult> invoke(Json args, ToolContext ctx) override {
    ProcessSpec spec;
    if (const Json* argv = args.find("argv"); argv && argv->is_array()) {
      for (const Json& a : argv->as_array()) spec.argv.push_back(a.is_string() ? a.as_string() : a.dump());
    }
    if (spec.argv.empty()) co_return fail(ToolErrorKind::kInvalidArguments, "argv is empty");
    if (std::find(cfg_.allow.begin(), cfg_.allow.end(), spec.argv[0]) == cfg_.allow.end()) {
      co_return fail(ToolErrorKind::kDenied,
                     "'" + spec.argv[0] + "' is not an allowed program; allowed: " + join(cfg_.allow));
    }
    for (const auto& a : spec.argv) {
      if (a.find('\0') != std::string::npos) co_return fail(ToolErrorKind::kInvalidArguments, "argv contains a NUL byte");
    }
    spec.env = child_env(cfg_);
    spec.cwd = ctx.workspace;
    if (cfg_.cwd) spec.cwd = (*cfg_.cwd)[0] == '/' ? std::filesystem::path(*cfg_.cwd) : spec.cwd / *cfg_.cwd;
    spec.stdin_data = string_arg(args, "stdin");
    spec.deadline = deadline_for(ctx, cfg_.timeout_ms);
    spec.max_stdout_bytes = static_cast<size_t>(cfg_.max_output);
    spec.max_stderr_bytes = static_cast<size_t>(cfg_.max_output);
    tool_log(ctx, base::LogLevel::kDebug, name(), "running " + spec.argv[0]);

    const std::string program = spec.argv[0];
    auto op = run_process(std::move(spec));
    auto ran = co_await std::move(op);
    if (!ran.ok()) co_return fail(ToolErrorKind::kFailed, ran.status().message());
    const ProcessResult& r = *ran;
    std::string what = "'" + program + "' " + describe_end(r);
    switch (r.end) {
      case ProcessResult::End::kExited: break;
      case ProcessResult::End::kSignaled: co_return fail(ToolErrorKind::kCrashed, what + stderr_excerpt(r));
      case ProcessResult::End::kTimedOut: co_return fail(ToolErrorKind::kTimeout, what + stderr_excerpt(r));
      case ProcessResult::End::kOutputTooLarge: co_return fail(ToolErrorKind::kOutputTooLarge, what);
      case ProcessResult::End::kCancelled: co_return fail(ToolErrorKind::kCancelled, what);
    }
    Json out = Json::object();
    out.set("exit_code", r.exit_code);
    out.set("stdout", to_valid_utf8(r.stdout_data));
    out.set("stderr", to_valid_utf8(r.stderr_data));
    co_return ToolResult::success(std::move(out));
  }

 private:
  static std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
  }

  Config cfg_;
};

}  // namespace

base::Result<std::shared_ptr<Tool>> make_shell(const BuiltinSpec& spec, const BuiltinEnv&) {
  DLOOP_ASSIGN_OR_RETURN(auto with, WithConfig::open(name_of(spec), spec.with,
                                                     {"allow", "timeout", "max_output_bytes", "env", "inherit_env", "cwd"}));
  Config cfg;
  DLOOP_ASSIGN_OR_RETURN(cfg.allow, with.get_string_list("allow"));
  if (cfg.allow.empty()) {
    return base::invalid_argument(name_of(spec) + ": the shell tool is off until with.allow lists the programs "
                                                  "it may run, e.g. allow: [ls, grep]");
  }
  DLOOP_ASSIGN_OR_RETURN(cfg.timeout_ms, with.get_duration_ms("timeout", 30'000));
  DLOOP_ASSIGN_OR_RETURN(cfg.max_output, with.get_int("max_output_bytes", 64 * 1024, 1, int64_t{1} << 30));
  DLOOP_ASSIGN_OR_RETURN(cfg.env, with.get_string_map("env"));
  DLOOP_ASSIGN_OR_RETURN(cfg.inherit_env, with.get_bool("inherit_env", false));
  DLOOP_ASSIGN_OR_RETURN(cfg.cwd, with.get_string("cwd"));
  return std::shared_ptr<Tool>(std::make_shared<Shell>(spec, std::move(cfg)));
}

}  // namespace dloop::tools::builtin
