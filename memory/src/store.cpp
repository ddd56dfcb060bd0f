// Store: opening and configuring the connection, transactions, row readers, and the run, step
// and integrity queries. The log writers are in store_log.cpp, the KV memory in store_kv.cpp.
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>

#include "dloop/base/log.h"
#include "schema.h"
#include "store_impl.h"

namespace dloop::memory {

using base::Result;
using base::Status;

std::string default_db_path() {
  const char* env = std::getenv("DLOOP_DB");
  if (env != nullptr && *env != '\0') return env;
  return "dloop.db";
}

Store::Impl::~Impl() {
  cache.clear();
  if (db != nullptr) sqlite3_close_v2(db);
}

int64_t Store::Impl::now_ms() const {
  if (options.clock_ms) return options.clock_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status Store::Impl::write_txn(std::string_view what, const std::function<Status()>& body) {
  const std::string context(what);
  Status st = detail::exec(db, "BEGIN IMMEDIATE", context);
  if (st.ok()) st = body();
  if (st.ok()) st = detail::exec(db, "COMMIT", context);
  // SQLite rolls some failures (IOERR, FULL, BUSY during COMMIT) back by itself; roll back the
  // rest. The Status above was captured first, so ROLLBACK cannot overwrite its message.
  if (!st.ok() && sqlite3_get_autocommit(db) == 0) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  return st;
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

int64_t Store::latest_schema_version() { return detail::latest_version(); }
int64_t Store::schema_version() const { return impl_->schema_version; }
const std::string& Store::path() const { return impl_->path; }

namespace {

Result<std::string> query_text(Store::Impl& impl, const char* sql, std::string_view what) {
  DLOOP_ASSIGN_OR_RETURN(auto s, impl.prepare(sql, what));
  DLOOP_ASSIGN_OR_RETURN(bool row, s.step());
  return row ? s.text_at(0) : std::string();
}

Status configure(Store::Impl& impl, bool in_memory) {
  // Checked before anything writes, so a foreign or newer file is refused untouched.
  auto version = detail::inspect(impl.db);
  if (!version.ok()) return version.status();
  DLOOP_ASSIGN_OR_RETURN(std::string mode, query_text(impl, "PRAGMA journal_mode = WAL", "setting WAL mode"));
  if (!in_memory && mode != "wal") return base::io_error("could not switch the database to WAL (mode '" + mode + "')");
  const char* sync = impl.options.sync == StoreOptions::Sync::kFull ? "PRAGMA synchronous = FULL"
                                                                     : "PRAGMA synchronous = NORMAL";
  DLOOP_RETURN_IF_ERROR(detail::exec(impl.db, sync, "setting synchronous"));
  DLOOP_RETURN_IF_ERROR(detail::exec(impl.db, "PRAGMA foreign_keys = ON", "enabling foreign keys"));
  DLOOP_ASSIGN_OR_RETURN(impl.schema_version, detail::migrate(impl.db, impl.now()));
  return Status();
}

}  // namespace

Result<std::unique_ptr<Store>> Store::open(const std::string& path, const StoreOptions& options) {
  const std::string where = "database '" + path + "'";
  if (path.empty()) return base::invalid_argument("memory: the database path is empty");
  const bool in_memory = path == ":memory:";
  if (!in_memory && !options.create_if_missing) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return base::not_found("no database at '" + path + "'");
  }
  const char* vfs = nullptr;
  if (!options.vfs.empty()) {
    if (sqlite3_vfs_find(options.vfs.c_str()) == nullptr) {
      return base::invalid_argument("memory: no SQLite VFS named '" + options.vfs + "'");
    }
    vfs = options.vfs.c_str();
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->path = path;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (options.create_if_missing ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path.c_str(), &impl->db, flags, vfs);
  if (rc != SQLITE_OK) return detail::sqlite_status(impl->db, rc, "opening " + where);
  sqlite3_extended_result_codes(impl->db, 1);
  sqlite3_busy_timeout(impl->db, options.busy_timeout_ms);
  impl->cache.set_db(impl->db);
  Status st = configure(*impl, in_memory);
  if (!st.ok()) return st.with_context(where);
  DLOOP_DEBUG("memory: opened ", where, " at schema version ", impl->schema_version);
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

namespace detail {

Result<base::Json> parse_stored_json(const std::string& text, std::string_view where) {
  auto j = base::Json::parse(text);
  if (!j.ok()) return base::data_loss(std::string(where) + ": stored JSON does not parse: " + j.status().message());
  return std::move(j).value();
}

Result<Run> read_run(const Stmt& s) {
  Run r;
  r.id = s.text_at(0);
  r.workflow = s.text_at(1);
  r.workflow_path = s.text_at(2);
  r.workflow_hash = s.text_at(3);
  const std::string where = "run " + r.id;
  DLOOP_ASSIGN_OR_RETURN(r.inputs, parse_stored_json(s.text_at(4), where + " inputs"));
  auto status = parse_run_status(s.text_at(5));
  if (!status) return base::data_loss(where + ": unknown status '" + s.text_at(5) + "'");
  r.status = *status;
  if (!s.is_null(6)) {
    DLOOP_ASSIGN_OR_RETURN(r.outputs, parse_stored_json(s.text_at(6), where + " outputs"));
  }
  r.error = s.text_at(7);
  r.created_at = s.text_at(8);
  r.updated_at = s.text_at(9);
  r.last_seq = s.int_at(10);
  return r;
}

Result<Event> read_event(const Stmt& s) {
  Event e;
  e.run_id = s.text_at(0);
  e.seq = s.int_at(1);
  e.type = s.text_at(2);
  e.step_path = s.text_at(3);
  e.attempt = s.int_at(4);
  e.turn = s.int_at(5);
  e.ordinal = s.int_at(6);
  DLOOP_ASSIGN_OR_RETURN(e.payload,
                         parse_stored_json(s.text_at(7), "run " + e.run_id + " event " + std::to_string(e.seq)));
  e.ts = s.text_at(8);
  return e;
}

Result<StepRecord> read_step(const Stmt& s) {
  StepRecord r;
  r.run_id = s.text_at(0);
  r.step_path = s.text_at(1);
  const std::string where = "run " + r.run_id + " step '" + r.step_path + "'";
  auto status = parse_step_status(s.text_at(2));
  if (!status) return base::data_loss(where + ": unknown status '" + s.text_at(2) + "'");
  r.status = *status;
  r.attempts = s.int_at(3);
  if (!s.is_null(4)) {
    DLOOP_ASSIGN_OR_RETURN(r.output, parse_stored_json(s.text_at(4), where + " output"));
  }
  r.error = s.text_at(5);
  r.started_at = s.text_at(6);
  r.ended_at = s.text_at(7);
  r.first_seq = s.int_at(8);
  r.last_seq = s.int_at(9);
  return r;
}

Result<Run> load_run(const Store::Impl& impl, const std::string& run_id) {
  DLOOP_ASSIGN_OR_RETURN(auto s, impl.prepare("SELECT " DLOOP_RUN_COLUMNS " FROM runs WHERE id = ?1", "reading a run"));
  s.bind(1, run_id);
  DLOOP_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row) return base::not_found("no run '" + run_id + "'");
  return read_run(s);
}

}  // namespace detail

Result<Run> Store::get_run(const std::string& run_id) const {
  std::lock_guard lock(impl_->mu);
  return detail::load_run(*impl_, run_id);
}

Result<std::vector<Run>> Store::list_runs(const RunFilter& filter) const {
  std::lock_guard lock(impl_->mu);
  DLOOP_ASSIGN_OR_RETURN(auto s, impl_->prepare("SELECT " DLOOP_RUN_COLUMNS
                                                " FROM runs WHERE (?1 IS NULL OR status = ?1)"
                                                " AND (?2 IS NULL OR workflow = ?2)"
                                                " ORDER BY created_at DESC, id DESC LIMIT ?3",
                                                "listing runs"));
  s.bind_opt(1, filter.status.has_value(), filter.status ? run_status_name(*filter.status) : "");
  s.bind_opt(2, !filter.workflow.empty(), filter.workflow);
  s.bind(3, filter.limit > 0 ? filter.limit : int64_t{-1});
  std::vector<Run> runs;
  while (true) {
    DLOOP_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    DLOOP_ASSIGN_OR_RETURN(Run r, detail::read_run(s));
    runs.push_back(std::move(r));
  }
  return runs;
}

Result<std::vector<StepRecord>> Store::steps(const std::string& run_id) const {
  std::lock_guard lock(impl_->mu);
  DLOOP_RETURN_IF_ERROR(detail::load_run(*impl_, run_id).status());
  DLOOP_ASSIGN_OR_RETURN(auto s, impl_->prepare("SELECT " DLOOP_STEP_COLUMNS
                                                " FROM steps WHERE run_id = ?1 ORDER BY first_seq",
                                                "reading steps"));
  s.bind(1, run_id);
  std::vector<StepRecord> steps;
  while (true) {
    DLOOP_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    DLOOP_ASSIGN_OR_RETURN(StepRecord r, detail::read_step(s));
    steps.push_back(std::move(r));
  }
  return steps;
}

Status Store::check_integrity() const {
  std::lock_guard lock(impl_->mu);
  {
    DLOOP_ASSIGN_OR_RETURN(auto s, impl_->prepare("PRAGMA integrity_check", "integrity check"));
    std::string report;
    while (true) {
      DLOOP_ASSIGN_OR_RETURN(bool row, s.step());
      if (!row) break;
      if (!report.empty()) report += "; ";
      report += s.text_at(0);
    }
    if (report != "ok") return base::data_loss("integrity check: " + report);
  }
  {
    DLOOP_ASSIGN_OR_RETURN(auto s, impl_->prepare("PRAGMA foreign_key_check", "foreign key check"));
    DLOOP_ASSIGN_OR_RETURN(bool row, s.step());
    if (row) return base::data_loss("foreign key check: a row of '" + s.text_at(0) + "' has no parent");
  }
  {
    DLOOP_ASSIGN_OR_RETURN(auto s, impl_->prepare(
        "SELECT r.id, r.last_seq, count(e.seq), coalesce(min(e.seq), 1), coalesce(max(e.seq), 0)"
        " FROM runs r LEFT JOIN events e ON e.run_id = r.id GROUP BY r.id"
        " HAVING count(e.seq) != r.last_seq OR coalesce(max(e.seq), 0) != r.last_seq"
        " OR coalesce(min(e.seq), 1) != 1 LIMIT 1",
        "log check"));
    DLOOP_ASSIGN_OR_RETURN(bool row, s.step());
    if (row) {
      return base::data_loss("log check: run " + s.text_at(0) + " has last_seq " + std::to_string(s.int_at(1)) +
                             " but " + std::to_string(s.int_at(2)) + " events numbered " +
                             std::to_string(s.int_at(3)) + ".." + std::to_string(s.int_at(4)));
    }
  }
  {
    DLOOP_ASSIGN_OR_RETURN(auto s, impl_->prepare(
        "SELECT run_id, type FROM events WHERE seq = 1 AND type != 'run_started' LIMIT 1", "log check"));
    DLOOP_ASSIGN_OR_RETURN(bool row, s.step());
    if (row) return base::data_loss("log check: run " + s.text_at(0) + " starts with '" + s.text_at(1) + "'");
  }
  return Status();
}

}  // namespace dloop::memory
