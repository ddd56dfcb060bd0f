// run_process(): posix_spawn + pipes read through asio::posix::stream_descriptor, a deadline
// timer, and a reap loop that never blocks the executor. See process.h.
#include "dloop/tools/process.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <mutex>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "dloop/base/strings.h"
#include "spawn.h"

namespace dloop::tools {
namespace {

using asio::posix::stream_descriptor;
constexpr auto kUse = asio::as_tuple(asio::use_awaitable);

void ignore_sigpipe_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction old {};
    if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
  });
}

// Owns the pipe descriptors until Asio takes them.
struct Fds {
  std::array<int, 6> fd{-1, -1, -1, -1, -1, -1};  // in_r, in_w, out_r, out_w, err_r, err_w
  ~Fds() {
    for (int f : fd) if (f >= 0) ::close(f);
  }
  int take(int i) { return std::exchange(fd[i], -1); }
};

// Kills and reaps the child if the coroutine ends early (an exception, a destroyed io_context).
struct ChildGuard {
  pid_t pid = -1;
  bool reaped = false;
  ~ChildGuard() {
    if (pid > 0 && !reaped) {
      ::kill(-pid, SIGKILL);
      int status;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    }
  }
};

base::Result<pid_t> spawn(const ProcessSpec& spec, Fds& fds) {
  detail::SpawnSpec s;
  s.argv = &spec.argv;
  s.env = &spec.env;
  s.cwd = spec.cwd;
  s.stdin_fd = fds.fd[0];
  s.stdout_fd = fds.fd[3];
  s.stderr_fd = fds.fd[5];
  return detail::spawn_in_group(s);
}

struct IoState {
  pid_t pid = -1;
  size_t max_stdout = 0;
  size_t max_stderr = 0;
  std::string out, err;
  bool out_exceeded = false;
  bool err_truncated = false;
};

asio::awaitable<bool> cancelled_now() {
  auto cs = co_await asio::this_coro::cancellation_state;
  co_return cs.cancelled() != asio::cancellation_type::none;
}

asio::awaitable<void> read_stdout(stream_descriptor& d, IoState& st) {
  co_await asio::this_coro::throw_if_cancelled(false);
  std::array<char, 16384> buf;
  while (true) {
    auto [ec, n] = co_await d.async_read_some(asio::buffer(buf), kUse);
    st.out.append(buf.data(), n);
    if (st.out.size() > st.max_stdout) {
      st.out.resize(st.max_stdout);
      st.out_exceeded = true;
      ::kill(-st.pid, SIGKILL);
      co_return;
    }
    if (ec || co_await cancelled_now()) co_return;
  }
}

asio::awaitable<void> read_stderr(stream_descriptor& d, IoState& st) {
  co_await asio::this_coro::throw_if_cancelled(false);
  std::array<char, 16384> buf;
  while (true) {
    auto [ec, n] = co_await d.async_read_some(asio::buffer(buf), kUse);
    st.err.append(buf.data(), n);
    if (st.err.size() > 2 * st.max_stderr + buf.size()) {  // keep only the tail
      st.err.erase(0, st.err.size() - st.max_stderr);
      st.err_truncated = true;
    }
    if (ec || co_await cancelled_now()) co_return;
  }
}

asio::awaitable<void> write_stdin(stream_descriptor& d, const std::string& data) {
  co_await asio::this_coro::throw_if_cancelled(false);
  if (!data.empty()) co_await asio::async_write(d, asio::buffer(data), kUse);  // EPIPE: child closed stdin
  boost::system::error_code ignored;
  d.close(ignored);
}

asio::awaitable<void> pump(stream_descriptor& in, stream_descriptor& out, stream_descriptor& err,
                           const std::string& stdin_data, IoState& st) {
  using namespace asio::experimental::awaitable_operators;
  auto all = read_stdout(out, st) && read_stderr(err, st) && write_stdin(in, stdin_data);
  co_await std::move(all);
}

asio::awaitable<base::Result<ProcessResult>> run(ProcessSpec spec) {
  co_await asio::this_coro::throw_if_cancelled(false);
  auto ex = co_await asio::this_coro::executor;
  if (spec.argv.empty() || spec.argv[0].empty()) co_return base::invalid_argument("empty argv");
  ignore_sigpipe_once();
  Fds fds;
  for (int i = 0; i < 3; ++i) {
    if (::pipe2(&fds.fd[2 * i], O_CLOEXEC) != 0) {
      co_return base::io_error(std::string("pipe: ") + strerror(errno));
    }
  }
  const auto start = Clock::now();
  auto spawned = spawn(spec, fds);
  if (!spawned.ok()) co_return spawned.status();
  const pid_t pid = *spawned;
  ChildGuard guard{pid};
  ::close(fds.take(0));
  ::close(fds.take(3));
  ::close(fds.take(5));
  stream_descriptor in(ex, fds.take(1)), out(ex, fds.take(2)), err(ex, fds.take(4));

  IoState st{pid, spec.max_stdout_bytes, spec.max_stderr_bytes};
  // A deadline beyond ten years is "none" (and keeps the timer arithmetic far from overflow).
  auto deadline = std::min(spec.deadline, start + std::chrono::hours(24 * 365 * 10));
  asio::steady_timer timer(ex);
  timer.expires_at(deadline);
  auto io = pump(in, out, err, spec.stdin_data, st);
  auto group = asio::experimental::make_parallel_group(asio::co_spawn(ex, std::move(io), asio::deferred),
                                                       timer.async_wait(asio::deferred));
  auto race = std::move(group).async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
  auto [order, io_error, timer_ec] = co_await std::move(race);
  (void)io_error;  // the pumps report through st; an exception there only means "stopped"

  ProcessResult result;
  bool timed_out = order[0] == 1 && !timer_ec;
  bool killed = timed_out || st.out_exceeded;
  bool cancelled = co_await cancelled_now();
  if (timed_out || cancelled) ::kill(-pid, SIGKILL);
  killed = killed || cancelled;

  // Reap without blocking: poll with a short backoff. WNOWAIT first, so the group can be killed
  // (stragglers, daemons) while the zombie still pins the group id.
  auto delay = std::chrono::milliseconds(1);
  while (true) {
    siginfo_t info{};
    int rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (rc == 0 && info.si_pid == pid) break;
    if (rc != 0 && errno != EINTR) break;
    if (!killed && (Clock::now() >= deadline || co_await cancelled_now())) {
      timed_out = Clock::now() >= deadline;
      cancelled = !timed_out;
      ::kill(-pid, SIGKILL);
      killed = true;
    }
    timer.expires_after(delay);
    co_await timer.async_wait(kUse);
    delay = std::min(delay * 2, std::chrono::milliseconds(50));
  }
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  guard.reaped = true;

  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  if (st.out_exceeded) result.end = ProcessResult::End::kOutputTooLarge;
  else if (timed_out) result.end = ProcessResult::End::kTimedOut;
  else if (cancelled) result.end = ProcessResult::End::kCancelled;
  else if (WIFSIGNALED(status)) result.end = ProcessResult::End::kSignaled;
  else result.end = ProcessResult::End::kExited;
  result.stdout_data = std::move(st.out);
  if (st.err.size() > st.max_stderr) {
    st.err.erase(0, st.err.size() - st.max_stderr);
    st.err_truncated = true;
  }
  result.stderr_data = std::move(st.err);
  result.stderr_truncated = st.err_truncated;
  co_return result;
}

}  // namespace

asio::awaitable<base::Result<ProcessResult>> run_process(ProcessSpec spec) {
  try {
    auto op = run(std::move(spec));
    co_return co_await std::move(op);
  } catch (const std::exception& e) {
    co_return base::internal_error(std::string("running a process: ") + e.what());
  }
}

std::string describe_end(const ProcessResult& r) {
  switch (r.end) {
    case ProcessResult::End::kExited:
      // 127 is how a shell (or a posix_spawn that cannot report exec failures) says "not found".
      return "exited with status " + std::to_string(r.exit_code) +
             (r.exit_code == 127 ? " (127 usually means a program was not found)" : "");
    case ProcessResult::End::kSignaled: {
      const char* abbrev = sigabbrev_np(r.term_signal);
      return "was killed by signal " + std::to_string(r.term_signal) +
             (abbrev ? " (SIG" + std::string(abbrev) + ")" : std::string());
    }
    case ProcessResult::End::kTimedOut: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(r.elapsed.count()) / 1000.0);
      return std::string("timed out after ") + buf + " s and was killed";
    }
    case ProcessResult::End::kOutputTooLarge: return "wrote more than " + std::to_string(r.stdout_data.size()) +
                                                     " bytes to stdout and was killed";
    case ProcessResult::End::kCancelled: return "was cancelled";
  }
  return "ended";
}

std::string to_valid_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  while (!bytes.empty()) {
    auto bad = base::find_invalid_utf8(bytes);
    if (!bad) {
      out.append(bytes);
      break;
    }
    out.append(bytes.substr(0, *bad));
    out.append("\xEF\xBF\xBD");
    bytes.remove_prefix(*bad + 1);
  }
  return out;
}

std::string stderr_excerpt(const ProcessResult& r, size_t max_bytes) {
  std::string_view err = base::trim(r.stderr_data);
  if (err.empty()) return "";
  bool cut = r.stderr_truncated || err.size() > max_bytes;
  if (err.size() > max_bytes) err = err.substr(err.size() - max_bytes);
  // Do not start in the middle of a UTF-8 sequence.
  while (!err.empty() && (static_cast<unsigned char>(err[0]) & 0xC0) == 0x80) err.remove_prefix(1);
  return std::string("; stderr") + (cut ? " (last part)" : "") + ": " + to_valid_utf8(err);
}

}  // namespace dloop::tools
