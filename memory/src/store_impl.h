// Store's private state (the connection, its statement cache, the mutex) and the row readers
// shared by the store_*.cpp files. Private to memory/. Thread-safety: every Store method locks
// `mu` before touching `db` or `cache`; the helpers here assume the caller holds it.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <mutex>
#include <random>
#include <string>

#include "dloop/memory/store.h"
#include "sqlite_util.h"

namespace dloop::memory {

struct Store::Impl {
  sqlite3* db = nullptr;
  mutable std::mutex mu;
  mutable detail::StatementCache cache;
  StoreOptions options;
  std::string path;
  int64_t schema_version = 0;
  std::mt19937_64 rng{std::random_device{}()};

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl();

  int64_t now_ms() const;
  std::string now() const { return detail::iso_time(now_ms()); }
  base::Result<detail::Stmt> prepare(const char* sql, std::string_view what) const { return cache.get(sql, what); }
  // Runs `body` inside BEGIN IMMEDIATE ... COMMIT and rolls back on any error, so a failed call
  // leaves nothing behind. The Status names `what`.
  base::Status write_txn(std::string_view what, const std::function<base::Status()>& body);
};

namespace detail {

// Column lists matching the readers below.
#define DLOOP_RUN_COLUMNS \
  "id, workflow, workflow_path, workflow_hash, inputs, status, outputs, error, created_at, updated_at, last_seq"
#define DLOOP_EVENT_COLUMNS "run_id, seq, type, step_path, attempt, turn, ordinal, payload, ts"
#define DLOOP_STEP_COLUMNS \
  "run_id, step_path, status, attempts, output, error, started_at, ended_at, first_seq, last_seq"

// Each reads the current row of a statement that selected the matching columns. data_loss when a
// stored JSON text or status name does not parse (the CHECK constraints make that corruption).
base::Result<Run> read_run(const Stmt& s);
base::Result<Event> read_event(const Stmt& s);
base::Result<StepRecord> read_step(const Stmt& s);
base::Result<base::Json> parse_stored_json(const std::string& text, std::string_view where);

// Looks a run up inside the caller's transaction; not_found when absent.
base::Result<Run> load_run(const Store::Impl& impl, const std::string& run_id);

// Run leases inside the caller's transaction (store_lease.cpp). check_lease: cancelled unless
// `owner` holds the run's lease. put_lease: writes (or overwrites) the lease for `request`.
base::Status check_lease(const Store::Impl& impl, const std::string& run_id, const std::string& owner);
base::Status put_lease(const Store::Impl& impl, const std::string& run_id, const LeaseRequest& request,
                       int64_t now_ms, bool keep_acquired);
base::Status delete_lease(const Store::Impl& impl, const std::string& run_id);

// invalid_argument unless the workflow name is non-empty and the key is 1..1024 bytes.
base::Status validate_kv_key(const std::string& workflow, const std::string& key);

}  // namespace detail
}  // namespace dloop::memory
