// Private: posix_spawn of a program in its own process group with three pipe ends as its stdin,
// stdout and stderr; no blocked signals and default handlers for the usual signals. Shared by
// run_process() (one-shot processes) and the MCP client (long-lived servers). Thread-safe.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "dloop/base/status.h"

namespace dloop::tools::detail {

struct SpawnSpec {
  const std::vector<std::string>* argv = nullptr;  // argv[0] without a '/' is looked up in PATH
  const std::optional<std::vector<std::string>>* env = nullptr;  // nullopt: inherit ("K=V" list)
  std::filesystem::path cwd;                       // empty: this process's working directory
  int stdin_fd = -1;                               // the child's ends of the pipes
  int stdout_fd = -1;
  int stderr_fd = -1;
};

// Errors: not_found for a missing program (or working directory), io otherwise; the message
// names argv[0] and the reason.
base::Result<pid_t> spawn_in_group(const SpawnSpec& spec);

}  // namespace dloop::tools::detail
