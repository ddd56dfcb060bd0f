// Always-on assertions for programming errors (bugs abort; expected failures are Status values).
// Thread-safe: the failure path writes one line to stderr and aborts.
#pragma once

namespace dloop::base {
[[noreturn]] void assert_fail(const char* expr, const char* file, int line, const char* msg);
}  // namespace dloop::base

#define DLOOP_ASSERT(cond)                                                 \
  do {                                                                     \
    if (!(cond)) ::dloop::base::assert_fail(#cond, __FILE__, __LINE__, ""); \
  } while (0)

#define DLOOP_ASSERT_MSG(cond, msg)                                          \
  do {                                                                       \
    if (!(cond)) ::dloop::base::assert_fail(#cond, __FILE__, __LINE__, msg); \
  } while (0)
