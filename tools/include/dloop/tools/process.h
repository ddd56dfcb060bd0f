// run_process(): starts a program with posix_spawn (an argv vector, never a shell string) in its
// own process group, feeds it stdin, reads stdout and stderr through Asio stream descriptors
// without blocking the loop, and always reaps it. On the deadline, on cancellation of the awaiting
// coroutine, or when stdout passes its cap, the whole process group gets SIGKILL. Used by the
// `shell` built-in and by command tools.
//
// Side effect: the first call sets SIGPIPE to SIG_IGN in this process (if it was SIG_DFL), so that
// writing to a child that closed its stdin is an EPIPE error, not death; children get the default
// disposition back. Thread-safety: many run_process calls may run at once on any executors.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "dloop/base/status.h"
#include "dloop/tools/tool.h"

namespace dloop::tools {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] without a '/' is looked up in PATH
  // The complete environment ("K=V"); nullopt inherits this process's environment.
  std::optional<std::vector<std::string>> env;
  std::filesystem::path cwd;      // empty: this process's working directory
  std::string stdin_data;         // written, then stdin is closed
  Clock::time_point deadline = Clock::time_point::max();
  size_t max_stdout_bytes = 1 << 20;  // more is kOutputTooLarge (the group is killed)
  size_t max_stderr_bytes = 64 * 1024;  // keeps the last this many bytes; never kills
};

struct ProcessResult {
  enum class End {
    kExited,          // exit_code is set
    kSignaled,        // killed by term_signal (not by us)
    kTimedOut,        // the deadline passed; we killed the group
    kOutputTooLarge,  // stdout passed max_stdout_bytes; we killed the group
    kCancelled,       // the awaiting coroutine was cancelled; we killed the group
  };
  End end = End::kExited;
  int exit_code = 0;
  int term_signal = 0;
  std::string stdout_data;   // at most max_stdout_bytes
  std::string stderr_data;   // the last max_stderr_bytes bytes
  bool stderr_truncated = false;
  std::chrono::milliseconds elapsed{0};
};

// Errors: the program could not be started (not_found for a missing program, io otherwise; the
// message names argv[0] and the reason). Everything after a successful start is a ProcessResult.
// Never throws.
asio::awaitable<base::Result<ProcessResult>> run_process(ProcessSpec spec);

// "exited with status 3", "killed by signal 9 (SIGKILL)", "timed out after 2.0 s", ...
std::string describe_end(const ProcessResult& result);
// `bytes` with every invalid UTF-8 sequence replaced by U+FFFD (process output into JSON).
std::string to_valid_utf8(std::string_view bytes);
// The last `max_bytes` of stderr, trimmed, prefixed with "; stderr: ", or "" when empty.
std::string stderr_excerpt(const ProcessResult& result, size_t max_bytes = 2000);

}  // namespace dloop::tools
