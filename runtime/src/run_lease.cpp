// RunContext's side of run leases and of a busy store: taking the lease of a resumed run (with
// the message that names its holder), the heartbeat that renews it on the loop, and store_call(),
// which retries a Store call that found the database busy or locked with bounded backoff and,
// when the budget runs out, stops the run's writes so the run is left `running` and resumable
// instead of failing for good (docs/state.md "Run leases" and "A busy store"). Everything here
// runs on the run's executor; the Store calls themselves run on the db worker.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <random>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include "dloop/base/log.h"
#include "offload.h"
#include "run_context.h"

namespace dloop::runtime {

struct RunContext::Heartbeat {
  explicit Heartbeat(asio::any_io_executor ex) : timer(ex) {}
  asio::steady_timer timer;
  bool stopped = false;
};

namespace {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

// "HOST:pid:[NS]:" names this host and PID namespace: a pid means the same process only to a
// holder with the same prefix (two containers may share a host name but not a PID namespace).
std::string process_prefix() {
  char ns[128] = {};
  ssize_t n = ::readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
  return host_name() + ":" + (n > 0 ? std::string(ns, static_cast<size_t>(n)) : std::string("pid:[?]")) + ":";
}

// Unique per process (prefix, pid, random) and per run within it (a counter).
std::string new_owner_id() {
  static const std::string process = [] {
    std::random_device rd;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%08x%08x", rd(), rd());
    return process_prefix() + std::to_string(::getpid()) + ":" + hex;
  }();
  static std::atomic<int64_t> counter{0};
  return process + ":" + std::to_string(++counter);
}

std::string iso(int64_t unix_ms) {
  time_t secs = static_cast<time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(unix_ms % 1000));
  return buf;
}

// The holder is a process on this host, in this PID namespace, that no longer exists (kill(pid, 0)
// fails with ESRCH). A reused pid looks alive: the safe direction.
bool holder_is_gone(const memory::Lease& l) {
  const std::string prefix = process_prefix() + std::to_string(l.pid) + ":";
  return l.pid > 0 && l.owner.compare(0, prefix.size(), prefix) == 0 &&
         ::kill(static_cast<pid_t>(l.pid), 0) != 0 && errno == ESRCH;
}

asio::awaitable<void> heartbeat_loop(std::shared_ptr<RunContext::Heartbeat> hb, std::shared_ptr<memory::Store> store,
                                     asio::any_io_executor db, std::string run_id, std::string owner, int64_t ttl_ms,
                                     std::shared_ptr<base::Status> stop) {
  const auto period = std::chrono::milliseconds(std::max<int64_t>(1, ttl_ms / 3));
  while (!hb->stopped) {
    hb->timer.expires_after(period);
    boost::system::error_code ec;
    auto wait = hb->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    co_await std::move(wait);
    if (hb->stopped) break;
    auto op = offload_boxed<base::Status>(db, [store, run_id, owner, ttl_ms]() {
      return store->renew_lease(run_id, owner, ttl_ms);
    });
    auto box = co_await std::move(op);
    const base::Status& st = *box.value;
    if (st.code() == base::Code::kCancelled) {
      // Another process took the lease after it expired: stop writing at once.
      if (stop->ok()) *stop = st;
      break;
    }
    // A busy store: the next beat tries again (the lease has three beats of slack).
    if (!st.ok()) DLOOP_WARN("run ", run_id, ": renewing the lease: ", st.message());
  }
}

}  // namespace

memory::LeaseRequest RunContext::lease_request() const {
  memory::LeaseRequest r;
  r.owner = lease_owner_.empty() ? new_owner_id() : lease_owner_;
  r.pid = ::getpid();
  r.host = host_name();
  r.ttl_ms = services_.lease_ttl_ms;
  return r;
}

asio::awaitable<base::Status> RunContext::take_lease() {
  memory::LeaseRequest req = lease_request();
  auto store = services_.store;
  const std::string run_id = run_id_;
  for (int round = 0; round < 2; ++round) {
    auto attempt = std::make_shared<memory::LeaseAttempt>();
    auto op = store_call([store, run_id, req, attempt]() -> base::Status {
      DLOOP_ASSIGN_OR_RETURN(*attempt, store->acquire_lease(run_id, req));
      return base::Status();
    }, "taking the run's lease");
    base::Status st = co_await std::move(op);
    if (!st.ok()) co_return st;
    if (attempt->acquired) {
      lease_owner_ = req.owner;
      co_return base::Status();
    }
    const memory::Lease& held = attempt->lease;
    const bool gone = holder_is_gone(held);
    const bool other_host = held.host != host_name();
    if (round == 0 && (gone || (request_.force_lease && other_host))) {
      DLOOP_WARN("run ", run_id, ": taking over the lease of pid ", held.pid, " on ", held.host,
                 gone ? " (no such process any more)" : " (--force)");
      req.replace_owner = held.owner;
      continue;
    }
    const int64_t now = store->now_ms();
    std::string msg = "run " + run_id + " is being executed by pid " + std::to_string(held.pid) + " on " +
                      held.host + " (its lease expires " + iso(held.expires_ms) + ", in " +
                      std::to_string(std::max<int64_t>(0, (held.expires_ms - now + 999) / 1000)) +
                      " s, unless that process renews it); ";
    msg += other_host ? "wait until it finishes, resume after its lease expires, or, if that host is down, "
                        "'dloop resume --force' takes the lease over now"
                      : "wait until it finishes (a live process on this host is never displaced)";
    *stop_ = base::Status(base::Code::kUnavailable, msg);
    co_return *stop_;
  }
  co_return base::internal_error("taking the run's lease: unreachable");
}

void RunContext::start_heartbeat(asio::any_io_executor loop) {
  if (lease_owner_.empty() || heartbeat_) return;
  heartbeat_ = std::make_shared<Heartbeat>(loop);
  asio::co_spawn(loop,
                 heartbeat_loop(heartbeat_, services_.store, services_.db, run_id_, lease_owner_,
                                services_.lease_ttl_ms, stop_),
                 asio::detached);
}

void RunContext::stop_heartbeat() {
  if (!heartbeat_) return;
  heartbeat_->stopped = true;
  heartbeat_->timer.cancel();
}

RunOutcome RunContext::left_resumable(base::Status why) const {
  RunOutcome r;
  r.run_id = run_id_;
  r.status = std::move(why);
  r.left_resumable = true;
  return r;
}

asio::awaitable<base::Status> RunContext::store_call(std::function<base::Status()> work, std::string what) {
  if (stopped()) co_return *stop_;
  const StoreRetry& policy = services_.store_retry;
  const auto give_up_at = Clock::now() + std::chrono::milliseconds(policy.budget_ms);
  int64_t delay_ms = std::max<int64_t>(1, policy.first_delay_ms);
  for (int tries = 1;; ++tries) {
    auto op = offload_boxed<base::Status>(services_.db, work);
    auto box = co_await std::move(op);
    base::Status st = std::move(*box.value);
    if (st.code() == base::Code::kCancelled && !lease_owner_.empty()) {
      *stop_ = st;  // the lease is gone: nothing more may be written by this process
      co_return st;
    }
    if (st.code() != base::Code::kUnavailable) co_return st;
    if (Clock::now() + std::chrono::milliseconds(delay_ms) > give_up_at || services_.cancelled->load()) {
      *stop_ = base::Status(base::Code::kUnavailable,
                            what + ": the state database stayed busy through " + std::to_string(tries) +
                                " tries over " + std::to_string(policy.budget_ms / 1000) + " s (" + st.message() +
                                "); the run is left resumable");
      co_return *stop_;
    }
    DLOOP_WARN("run ", run_id_, ": ", what, ": ", st.message(), "; retrying in ", delay_ms, " ms");
    asio::steady_timer timer(co_await asio::this_coro::executor);
    timer.expires_after(std::chrono::milliseconds(delay_ms));
    boost::system::error_code ec;
    auto wait = timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    co_await std::move(wait);
    delay_ms = std::min(delay_ms * 2, std::max<int64_t>(1, policy.max_delay_ms));
  }
}

}  // namespace dloop::runtime
