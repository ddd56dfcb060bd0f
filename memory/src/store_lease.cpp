// Store: run leases (the run_leases table, schema version 3). A lease says which process executes
// a run; it is taken atomically (inside BEGIN IMMEDIATE, so two takers serialise on SQLite's
// write lock and exactly one wins), renewed by the owner's heartbeat and released with the run's
// terminal event. Commits of a lease holder check it in their own transaction (check_lease), so a
// process that lost its lease cannot write one more event. Thread-safety: as every Store call.
#include "store_impl.h"

namespace dloop::memory {

using base::Result;
using base::Status;

namespace detail {
namespace {

#define DLOOP_LEASE_COLUMNS "run_id, owner, pid, host, acquired_ms, heartbeat_ms, expires_ms"

Lease read_lease(const Stmt& s) {
  Lease l;
  l.run_id = s.text_at(0);
  l.owner = s.text_at(1);
  l.pid = s.int_at(2);
  l.host = s.text_at(3);
  l.acquired_ms = s.int_at(4);
  l.heartbeat_ms = s.int_at(5);
  l.expires_ms = s.int_at(6);
  return l;
}

Result<std::optional<Lease>> load_lease(const Store::Impl& impl, const std::string& run_id) {
  DLOOP_ASSIGN_OR_RETURN(auto s, impl.prepare("SELECT " DLOOP_LEASE_COLUMNS " FROM run_leases WHERE run_id = ?1",
                                              "reading a run lease"));
  s.bind(1, run_id);
  DLOOP_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row) return std::optional<Lease>();
  return std::optional<Lease>(read_lease(s));
}

}  // namespace

Status check_lease(const Store::Impl& impl, const std::string& run_id, const std::string& owner) {
  DLOOP_ASSIGN_OR_RETURN(std::optional<Lease> held, load_lease(impl, run_id));
  if (held && held->owner == owner) return Status();
  return base::cancelled("run " + run_id + ": this process no longer holds the run's lease" +
                         (held ? " (now held by pid " + std::to_string(held->pid) + " on " + held->host + ")"
                               : std::string(" (released)")));
}

Status put_lease(const Store::Impl& impl, const std::string& run_id, const LeaseRequest& request, int64_t now_ms,
                 bool keep_acquired) {
  DLOOP_ASSIGN_OR_RETURN(
      auto s, impl.prepare("INSERT INTO run_leases (" DLOOP_LEASE_COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)"
                           " ON CONFLICT (run_id) DO UPDATE SET owner = ?2, pid = ?3, host = ?4,"
                           " acquired_ms = CASE WHEN ?7 THEN acquired_ms ELSE ?5 END,"
                           " heartbeat_ms = ?5, expires_ms = ?6",
                           "taking a run lease"));
  s.bind(1, run_id).bind(2, request.owner).bind(3, request.pid).bind(4, request.host).bind(5, now_ms);
  s.bind(6, now_ms + request.ttl_ms).bind(7, int64_t{keep_acquired ? 1 : 0});
  return s.run();
}

Status delete_lease(const Store::Impl& impl, const std::string& run_id) {
  DLOOP_ASSIGN_OR_RETURN(auto s, impl.prepare("DELETE FROM run_leases WHERE run_id = ?1", "releasing a run lease"));
  s.bind(1, run_id);
  return s.run();
}

}  // namespace detail

int64_t Store::now_ms() const { return impl_->now_ms(); }

Result<LeaseAttempt> Store::acquire_lease(const std::string& run_id, const LeaseRequest& request) {
  if (request.owner.empty()) return base::invalid_argument("acquire_lease: the owner is empty");
  if (request.ttl_ms <= 0) return base::invalid_argument("acquire_lease: ttl_ms must be positive");
  std::lock_guard lock(impl_->mu);
  LeaseAttempt attempt;
  Status st = impl_->write_txn("taking the lease of run " + run_id, [&]() -> Status {
    DLOOP_ASSIGN_OR_RETURN(Run run, detail::load_run(*impl_, run_id));
    if (run.status != RunStatus::kRunning && run.status != RunStatus::kCancelled &&
        run.status != RunStatus::kFailed) {
      return base::invalid_argument("run " + run_id + " already " + run_status_name(run.status));
    }
    const int64_t now = impl_->now_ms();
    DLOOP_ASSIGN_OR_RETURN(std::optional<Lease> held, detail::load_lease(*impl_, run_id));
    const bool ours = held && held->owner == request.owner;
    const bool free = !held || held->expires_ms <= now || ours ||
                      (!request.replace_owner.empty() && held->owner == request.replace_owner);
    if (!free) {
      attempt.lease = *held;
      return Status();
    }
    DLOOP_RETURN_IF_ERROR(detail::put_lease(*impl_, run_id, request, now, ours));
    DLOOP_ASSIGN_OR_RETURN(std::optional<Lease> mine, detail::load_lease(*impl_, run_id));
    attempt.acquired = true;
    attempt.lease = *mine;
    return Status();
  });
  if (!st.ok()) return st;
  return attempt;
}

Status Store::renew_lease(const std::string& run_id, const std::string& owner, int64_t ttl_ms) {
  std::lock_guard lock(impl_->mu);
  return impl_->write_txn("renewing the lease of run " + run_id, [&]() -> Status {
    DLOOP_RETURN_IF_ERROR(detail::check_lease(*impl_, run_id, owner));
    const int64_t now = impl_->now_ms();
    DLOOP_ASSIGN_OR_RETURN(auto s, impl_->prepare("UPDATE run_leases SET heartbeat_ms = ?2, expires_ms = ?3"
                                                  " WHERE run_id = ?1",
                                                  "renewing a run lease"));
    s.bind(1, run_id).bind(2, now).bind(3, now + ttl_ms);
    return s.run();
  });
}

Status Store::release_lease(const std::string& run_id, const std::string& owner) {
  std::lock_guard lock(impl_->mu);
  return impl_->write_txn("releasing the lease of run " + run_id, [&]() -> Status {
    if (!detail::check_lease(*impl_, run_id, owner).ok()) return Status();
    return detail::delete_lease(*impl_, run_id);
  });
}

Result<std::optional<Lease>> Store::get_lease(const std::string& run_id) const {
  std::lock_guard lock(impl_->mu);
  return detail::load_lease(*impl_, run_id);
}

}  // namespace dloop::memory
