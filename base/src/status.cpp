// Status formatting and the assertion failure path.
#include <cstdio>
#include <cstdlib>

#include "dloop/base/assert.h"
#include "dloop/base/status.h"

namespace dloop::base {

void assert_fail(const char* expr, const char* file, int line, const char* msg) {
  std::fprintf(stderr, "dloop: assertion failed at %s:%d: %s%s%s\n", file, line, expr,
               (msg && *msg) ? ": " : "", msg ? msg : "");
  std::fflush(stderr);
  std::abort();
}

const char* code_name(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: return "invalid_argument";
    case Code::kNotFound: return "not_found";
    case Code::kDataLoss: return "data_loss";
    case Code::kUnimplemented: return "unimplemented";
    case Code::kOutOfRange: return "out_of_range";
    case Code::kResourceExhausted: return "resource_exhausted";
    case Code::kDeadlineExceeded: return "deadline_exceeded";
    case Code::kCancelled: return "cancelled";
    case Code::kUnavailable: return "unavailable";
    case Code::kInternal: return "internal";
    case Code::kIo: return "io";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(code_name(code_)) + ": " + message_;
}

Status Status::with_context(const std::string& prefix) const {
  if (ok()) return *this;
  return Status(code_, prefix + ": " + message_);
}

}  // namespace dloop::base
