// Status and Result<T>: expected failures as values (a bad GGUF, a YAML error, a tool timeout).
// A Status is a code plus a message that names the place (file:line:column, key, byte offset).
// Result<T> holds either a T or a non-ok Status. Both are plain values; not thread-safe to mutate
// concurrently, safe to copy between threads.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "dloop/base/assert.h"

namespace dloop::base {

enum class Code {
  kOk = 0,
  kInvalidArgument,   // bad input from a user: flags, YAML, JSON, schema
  kNotFound,          // a file, key, tensor, run or tool that does not exist
  kDataLoss,          // corrupt or truncated data (GGUF, trace, database)
  kUnimplemented,     // a feature this build does not have
  kOutOfRange,        // a value or offset outside its allowed range
  kResourceExhausted, // a size cap or budget was hit
  kDeadlineExceeded,  // a timeout
  kCancelled,         // cancelled by the user or a shutdown
  kUnavailable,       // a transient failure worth retrying (busy database, crashed server)
  kInternal,          // an invariant broke in a dependency (not a bug of ours)
  kIo,                // an operating-system I/O error
};

const char* code_name(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid_argument: flow.yaml:3:5: unknown key 'stpes'"
  std::string to_string() const;
  // Returns a copy whose message is "prefix: message" (adds context while an error travels up).
  Status with_context(const std::string& prefix) const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status not_found(std::string m) { return {Code::kNotFound, std::move(m)}; }
inline Status data_loss(std::string m) { return {Code::kDataLoss, std::move(m)}; }
inline Status unimplemented(std::string m) { return {Code::kUnimplemented, std::move(m)}; }
inline Status out_of_range(std::string m) { return {Code::kOutOfRange, std::move(m)}; }
inline Status resource_exhausted(std::string m) { return {Code::kResourceExhausted, std::move(m)}; }
inline Status deadline_exceeded(std::string m) { return {Code::kDeadlineExceeded, std::move(m)}; }
inline Status cancelled(std::string m) { return {Code::kCancelled, std::move(m)}; }
inline Status unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
inline Status internal_error(std::string m) { return {Code::kInternal, std::move(m)}; }
inline Status io_error(std::string m) { return {Code::kIo, std::move(m)}; }

// Result<T>: a T or an error Status. Accessing value() of an error is a bug and aborts.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::in_place_index<1>, std::move(status)) {  // NOLINT
    DLOOP_ASSERT_MSG(!std::get<1>(v_).ok(), "Result built from an ok Status");
  }

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { DLOOP_ASSERT_MSG(ok(), "value() of an error Result"); return std::get<0>(v_); }
  const T& value() const& { DLOOP_ASSERT_MSG(ok(), "value() of an error Result"); return std::get<0>(v_); }
  T&& value() && { DLOOP_ASSERT_MSG(ok(), "value() of an error Result"); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The error; an ok Status when this holds a value.
  Status status() const { return ok() ? Status() : std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace dloop::base

// Propagate a non-ok Status from an expression returning Status.
#define DLOOP_RETURN_IF_ERROR(expr)               \
  do {                                            \
    ::dloop::base::Status dloop_st_ = (expr);     \
    if (!dloop_st_.ok()) return dloop_st_;        \
  } while (0)

#define DLOOP_CONCAT_INNER_(a, b) a##b
#define DLOOP_CONCAT_(a, b) DLOOP_CONCAT_INNER_(a, b)
// `DLOOP_ASSIGN_OR_RETURN(auto x, f());` declares x from a Result or returns its Status.
#define DLOOP_ASSIGN_OR_RETURN(lhs, expr) \
  DLOOP_ASSIGN_OR_RETURN_IMPL_(DLOOP_CONCAT_(dloop_res_, __LINE__), lhs, expr)
#define DLOOP_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
