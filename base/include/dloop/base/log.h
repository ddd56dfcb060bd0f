// Leveled logging to stderr. One line per message: "[dloop] LEVEL message".
// The level comes from set_log_level() (the CLI's --log-level) or the DLOOP_LOG environment
// variable (read once, on first use). Thread-safe: each line is written with a single call under
// a mutex, so lines from different threads never interleave.
#pragma once

#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace dloop::base {

enum class LogLevel { kTrace = 0, kDebug, kInfo, kWarn, kError, kOff };

// "trace", "debug", "info", "warn", "error", "off" (case-insensitive); nullopt otherwise.
std::optional<LogLevel> parse_log_level(std::string_view text);
const char* log_level_name(LogLevel level);

void set_log_level(LogLevel level);
LogLevel log_level();
bool log_enabled(LogLevel level);
void log_line(LogLevel level, std::string_view message);

namespace detail {
template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
}  // namespace detail

}  // namespace dloop::base

#define DLOOP_LOG_AT_(level, ...)                                                    \
  do {                                                                               \
    if (::dloop::base::log_enabled(level))                                           \
      ::dloop::base::log_line(level, ::dloop::base::detail::concat(__VA_ARGS__));    \
  } while (0)
#define DLOOP_TRACE(...) DLOOP_LOG_AT_(::dloop::base::LogLevel::kTrace, __VA_ARGS__)
#define DLOOP_DEBUG(...) DLOOP_LOG_AT_(::dloop::base::LogLevel::kDebug, __VA_ARGS__)
#define DLOOP_INFO(...) DLOOP_LOG_AT_(::dloop::base::LogLevel::kInfo, __VA_ARGS__)
#define DLOOP_WARN(...) DLOOP_LOG_AT_(::dloop::base::LogLevel::kWarn, __VA_ARGS__)
#define DLOOP_ERROR(...) DLOOP_LOG_AT_(::dloop::base::LogLevel::kError, __VA_ARGS__)
