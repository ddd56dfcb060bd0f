// memory::Store: the SQLite state database. The append-only event log, keyed by (run_id, seq), is
// the source of truth; the runs and steps tables are derived from it in the same transaction,
// and the per-workflow KV memory lives beside it. A turn of an agent step is one Batch, committed
// in one transaction: either all of its events (and KV writes) are in the log or none are.
// docs/state.md documents the schema, the event payloads and the durability guarantees.
//
// What it is not: it does not run workflows or decide what to resume; the runtime does that with
// events() and recorded().
//
// Thread-safety: a Store is safe to share between threads. Every call takes an internal mutex,
// so calls on one Store run one at a time; each call blocks on SQLite (disk, busy_timeout), so
// the runtime calls it from a worker thread, never from the Asio loop. Several Stores (or
// processes) may open the same file: WAL lets readers run beside one writer, writers queue on
// SQLite's lock for up to busy_timeout_ms, and seq stays gap-free because it is assigned inside
// the write transaction.
//
// Errors: every SQLite failure is a Status. SQLITE_BUSY/LOCKED after the timeout -> unavailable;
// SQLITE_FULL -> resource_exhausted; SQLITE_IOERR -> io; SQLITE_CORRUPT/NOTADB -> data_loss;
// constraint violations -> invalid_argument. No exception leaves this header's functions.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/status.h"
#include "dloop/memory/records.h"

namespace dloop::memory {

// `$DLOOP_DB` when set and non-empty, else "dloop.db" (the current directory). The CLI and the
// runtime both use this default.
std::string default_db_path();

struct StoreOptions {
  // FULL (the default) fsyncs the WAL at every commit: a committed turn survives a process kill,
  // an OS crash and a power loss. NORMAL skips that fsync: a committed turn survives a process
  // kill (SIGKILL) but the last turns may be lost on power loss (the database stays consistent).
  enum class Sync { kNormal, kFull };
  Sync sync = Sync::kFull;
  int busy_timeout_ms = 5000;     // how long a write waits for another writer before unavailable
  bool create_if_missing = true;  // false: a missing file is not_found (the CLI's readers)
  std::string vfs;                // a registered SQLite VFS name; "" = the default (tests: fault_vfs)
  // Milliseconds since the Unix epoch for timestamps; empty = the system clock (tests fix it).
  std::function<int64_t()> clock_ms;
};

// A run lease (docs/state.md "Run leases"): the process executing a run. `owner` is unique per
// process and run; pid and host say who it is to a person; times are Unix ms.
struct Lease {
  std::string run_id;
  std::string owner;
  int64_t pid = 0;
  std::string host;
  int64_t acquired_ms = 0;
  int64_t heartbeat_ms = 0;
  int64_t expires_ms = 0;
};

struct LeaseRequest {
  std::string owner;  // required
  int64_t pid = 0;
  std::string host;
  int64_t ttl_ms = 30000;  // the lease expires this long after each heartbeat
  // Non-empty: take over an unexpired lease too, but only while it is still held by exactly this
  // owner (the caller established that owner is dead, e.g. its pid is gone on this host).
  std::string replace_owner;
};

// What acquire_lease found: acquired (then `lease` is ours), or held by someone else (then
// `lease` is the holder's, unexpired).
struct LeaseAttempt {
  bool acquired = false;
  Lease lease;
};

// A turn: events for one run plus KV writes, committed atomically by Store::commit.
class Batch {
 public:
  explicit Batch(std::string run_id) : run_id_(std::move(run_id)) {}
  // Fencing: commit only while `owner` holds the run's lease (cancelled otherwise, nothing
  // written). With `release`, the lease is deleted in the same transaction (the run's last write).
  Batch& lease(std::string owner, bool release = false) {
    lease_owner_ = std::move(owner);
    release_lease_ = release;
    return *this;
  }
  const std::string& lease_owner() const { return lease_owner_; }
  bool release_lease() const { return release_lease_; }
  Batch& append(NewEvent event) {
    events_.push_back(std::move(event));
    return *this;
  }
  Batch& kv_put(std::string workflow, std::string key, base::Json value) {
    kv_puts_.push_back({std::move(workflow), std::move(key), std::move(value)});
    return *this;
  }
  const std::string& run_id() const { return run_id_; }
  const std::vector<NewEvent>& events() const { return events_; }
  bool empty() const { return events_.empty() && kv_puts_.empty(); }

  struct KvPut {
    std::string workflow;
    std::string key;
    base::Json value;
  };
  const std::vector<KvPut>& kv_puts() const { return kv_puts_; }

 private:
  std::string run_id_;
  std::vector<NewEvent> events_;
  std::vector<KvPut> kv_puts_;
  std::string lease_owner_;
  bool release_lease_ = false;
};

// Where a recorded call sits in a run: the ordinal-th event of `type` in attempt `attempt` of the
// step at `step_path`. Re-executing a step deterministically makes the same calls in the same
// order, so the k-th tool_result it needs is the recorded one with ordinal k.
struct CallKey {
  std::string step_path;
  int64_t attempt = 0;
  std::string type;
  int64_t ordinal = 0;
};

struct RunFilter {
  std::optional<RunStatus> status;
  std::string workflow;  // "" = any
  int64_t limit = 50;    // <= 0: no limit
};

class Store {
 public:
  // Opens (or creates) the database at `path` (":memory:" for a private in-memory one), sets WAL,
  // foreign keys, busy_timeout and synchronous, and applies pending forward migrations in one
  // transaction. Errors: not_found (missing file and !create_if_missing), unimplemented (the
  // database was written by a newer dloop: schema version above latest_schema_version()),
  // invalid_argument (not a dloop database), data_loss (corrupt), io, unavailable (locked).
  static base::Result<std::unique_ptr<Store>> open(const std::string& path, const StoreOptions& options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  static int64_t latest_schema_version();
  int64_t schema_version() const;  // after open: always latest_schema_version()
  const std::string& path() const;

  // Creates a run (status running) and appends its run_started event (seq 1) in one transaction.
  // Returns the run id. Errors: invalid_argument (empty workflow, bad or duplicate explicit id).
  // With `lease`, the new run's lease is taken in the same transaction.
  base::Result<std::string> create_run(const NewRun& run, const std::optional<LeaseRequest>& lease = std::nullopt);

  // Commits a Batch in one transaction: assigns each event the next seq (gap-free) and its
  // ordinal, updates the run's and steps' derived rows, applies the KV writes. Returns the seq
  // of the last event (the run's last_seq). On any error nothing of the batch is written.
  // Errors: not_found (unknown run), invalid_argument (bad type, negative attempt/turn,
  // run_started, or an event other than run_resumed on a finished run), and SQLite errors.
  base::Result<int64_t> commit(const Batch& batch);
  // Shorthand for a Batch holding just these events.
  base::Result<int64_t> append(const std::string& run_id, std::vector<NewEvent> events);
  // Appends run_completed (outputs), run_failed (error) or run_cancelled (error as the reason)
  // and sets the run's status. invalid_argument for kRunning or an already finished run. With a
  // non-empty `lease_owner`, only while that owner holds the lease, which is released with it.
  base::Result<int64_t> finish_run(const std::string& run_id, RunStatus status, base::Json outputs,
                                   const std::string& error, const std::string& lease_owner = "");

  // Run leases, each call one transaction. acquire_lease takes the run's lease when nobody holds
  // it, its holder's lease expired, `request.owner` already holds it, or `replace_owner` still
  // holds it; otherwise it reports the holder. not_found for an unknown run, invalid_argument
  // for a finished one. renew_lease moves the expiry to now + ttl_ms: cancelled when the lease
  // is no longer `owner`'s (another process took it after it expired). release_lease deletes it
  // if `owner` holds it (no error otherwise). get_lease: nullopt when nobody ever took one.
  base::Result<LeaseAttempt> acquire_lease(const std::string& run_id, const LeaseRequest& request);
  base::Status renew_lease(const std::string& run_id, const std::string& owner, int64_t ttl_ms);
  base::Status release_lease(const std::string& run_id, const std::string& owner);
  base::Result<std::optional<Lease>> get_lease(const std::string& run_id) const;
  int64_t now_ms() const;  // the store's clock (StoreOptions::clock_ms), Unix ms

  // Writes a run recorded elsewhere (`dloop trace import`): the runs row from `run` (id, workflow,
  // path, hash, inputs) and `events` exactly as given (seq, type, step, attempt, turn, timestamps,
  // payloads), with the run's status and the steps rows derived from them, in one transaction.
  // Errors: invalid_argument naming the event's seq (events not numbered 1..n, the first not
  // run_started, an ordinal other than the one the log assigns, a bad type, an event after the
  // run ended without run_resumed, a run with this id exists) and SQLite errors.
  base::Status import_run(const Run& run, const std::vector<Event>& events);

  // Events with seq > after_seq in seq order, at most `limit` of them (<= 0: all). Page through
  // a long log by passing the last seq seen. not_found when the run does not exist.
  base::Result<std::vector<Event>> events(const std::string& run_id, int64_t after_seq = 0,
                                          int64_t limit = 0) const;
  // The recorded event at `key`, or nullopt (resume then executes the call for real).
  base::Result<std::optional<Event>> recorded(const std::string& run_id, const CallKey& key) const;
  base::Result<std::optional<Event>> recorded_tool_result(const std::string& run_id, const std::string& step_path,
                                                          int64_t attempt, int64_t ordinal) const;
  base::Result<std::optional<Event>> recorded_model_output(const std::string& run_id, const std::string& step_path,
                                                           int64_t attempt, int64_t ordinal) const;

  base::Result<Run> get_run(const std::string& run_id) const;  // not_found when absent
  // Newest first (created_at, then id).
  base::Result<std::vector<Run>> list_runs(const RunFilter& filter = {}) const;
  // The run's steps in the order they started. not_found when the run does not exist.
  base::Result<std::vector<StepRecord>> steps(const std::string& run_id) const;

  // Per-workflow KV memory (the memory_get / memory_put tools). Keys are non-empty, at most 1024
  // bytes; values any JSON. kv_delete returns whether the key existed.
  base::Result<std::optional<base::Json>> kv_get(const std::string& workflow, const std::string& key) const;
  base::Status kv_put(const std::string& workflow, const std::string& key, const base::Json& value);
  base::Result<bool> kv_delete(const std::string& workflow, const std::string& key);
  // Entries whose key starts with `prefix`, in key order.
  base::Result<std::vector<KvEntry>> kv_list(const std::string& workflow, const std::string& prefix = "") const;

  // PRAGMA integrity_check and foreign_key_check, plus the log's own invariants: every run's
  // events are numbered 1..last_seq without gaps and start with run_started. data_loss naming the
  // first problem; ok otherwise.
  base::Status check_integrity() const;

  struct Impl;

 private:
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dloop::memory
