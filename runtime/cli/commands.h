// The verb table of the `dloop` binary and the top-level dispatcher. A new verb is a new
// cmd_<verb>.cpp file plus one line in the table in commands.cpp. Exit codes: 0 success, 1 the
// run or operation failed, 2 bad usage or bad input. Not thread-safe (process start-up).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace dloop::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

// (NAME, value) of a run's secret `env` values: what runtime::redact keeps out of events, errors
// and tables the CLI prints (trace.h).
using Secrets = std::vector<std::pair<std::string, std::string>>;

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);  // args after the verb
};

// Verbs that work in this build, in the order --help lists them.
const std::vector<Command>& commands();
// Verbs of the design that are not built yet: they exit 2 saying so.
const std::vector<Command>& planned_commands();

// The verbs (one cmd_<verb>.cpp each).
int cmd_generate(const std::vector<std::string>& args);
int cmd_bench(const std::vector<std::string>& args);
int cmd_validate(const std::vector<std::string>& args);
int cmd_runs(const std::vector<std::string>& args);
int cmd_run(const std::vector<std::string>& args);
int cmd_resume(const std::vector<std::string>& args);
int cmd_index(const std::vector<std::string>& args);
int cmd_mcp(const std::vector<std::string>& args);
int cmd_replay(const std::vector<std::string>& args);
int cmd_trace(const std::vector<std::string>& args);
int runs_diff(const std::vector<std::string>& args);  // `dloop runs diff` (runs_diff.cpp)
int cmd_serve(const std::vector<std::string>& args);
int cmd_eval(const std::vector<std::string>& args);

// Runs `dloop ARGS...` (argv without the program name); returns the exit code.
int dispatch(std::vector<std::string> args);

std::string top_level_usage();

}  // namespace dloop::cli
