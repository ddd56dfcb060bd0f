// Leveled stderr logging; see log.h.
#include "dloop/base/log.h"

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace dloop::base {
namespace {

LogLevel initial_level() {
  const char* env = std::getenv("DLOOP_LOG");
  if (env != nullptr) {
    if (auto level = parse_log_level(env)) return *level;
  }
  return LogLevel::kWarn;
}

std::atomic<int>& level_storage() {
  static std::atomic<int> level{static_cast<int>(initial_level())};
  return level;
}

std::mutex& write_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

std::optional<LogLevel> parse_log_level(std::string_view text) {
  std::string lower;
  for (char c : text) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (lower == "trace") return LogLevel::kTrace;
  if (lower == "debug") return LogLevel::kDebug;
  if (lower == "info") return LogLevel::kInfo;
  if (lower == "warn" || lower == "warning") return LogLevel::kWarn;
  if (lower == "error") return LogLevel::kError;
  if (lower == "off" || lower == "none") return LogLevel::kOff;
  return std::nullopt;
}

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return "TRACE";
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kWarn: return "WARN";
    case LogLevel::kError: return "ERROR";
    case LogLevel::kOff: return "OFF";
  }
  return "?";
}

void set_log_level(LogLevel level) { level_storage().store(static_cast<int>(level)); }
LogLevel log_level() { return static_cast<LogLevel>(level_storage().load()); }
bool log_enabled(LogLevel level) {
  return level != LogLevel::kOff && static_cast<int>(level) >= level_storage().load();
}

void log_line(LogLevel level, std::string_view message) {
  std::string line = "[dloop] ";
  line += log_level_name(level);
  line += ' ';
  line += message;
  line += '\n';
  std::lock_guard<std::mutex> lock(write_mutex());
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace dloop::base
