// Forward migrations of the state database; see schema.h and docs/state.md (which lists the
// resulting tables column by column: keep the two in step).
#include "schema.h"

#include <vector>

#include "sqlite_util.h"

namespace dloop::memory::detail {
namespace {

struct Migration {
  int64_t version;
  const char* name;
  const char* sql;
};

// Version 1: the event log and the tables derived from it. `events` is append-only (the triggers
// reject UPDATE and DELETE); runs and steps are rewritten as events arrive.
constexpr const char* kV1EventLog = R"sql(
CREATE TABLE runs (
  id            TEXT PRIMARY KEY NOT NULL,
  workflow      TEXT NOT NULL,
  workflow_path TEXT NOT NULL DEFAULT '',
  workflow_hash TEXT NOT NULL DEFAULT '',
  inputs        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(inputs)),
  status        TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
  outputs       TEXT CHECK (outputs IS NULL OR json_valid(outputs)),
  error         TEXT NOT NULL DEFAULT '',
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  last_seq      INTEGER NOT NULL DEFAULT 0 CHECK (last_seq >= 0)
);
CREATE INDEX runs_by_created ON runs (created_at, id);
CREATE INDEX runs_by_status ON runs (status, created_at);
CREATE INDEX runs_by_workflow ON runs (workflow, created_at);

CREATE TABLE events (
  run_id    TEXT NOT NULL REFERENCES runs (id),
  seq       INTEGER NOT NULL CHECK (seq >= 1),
  type      TEXT NOT NULL,
  step_path TEXT NOT NULL DEFAULT '',
  attempt   INTEGER NOT NULL DEFAULT 0 CHECK (attempt >= 0),
  turn      INTEGER NOT NULL DEFAULT 0 CHECK (turn >= 0),
  ordinal   INTEGER NOT NULL DEFAULT 0 CHECK (ordinal >= 0),
  payload   TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(payload)),
  ts        TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE UNIQUE INDEX events_by_call ON events (run_id, step_path, attempt, type, ordinal);
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: UPDATE is not allowed'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: DELETE is not allowed'); END;

CREATE TABLE steps (
  run_id     TEXT NOT NULL REFERENCES runs (id),
  step_path  TEXT NOT NULL,
  status     TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'skipped')),
  attempts   INTEGER NOT NULL DEFAULT 0,
  output     TEXT CHECK (output IS NULL OR json_valid(output)),
  error      TEXT NOT NULL DEFAULT '',
  started_at TEXT,
  ended_at   TEXT,
  first_seq  INTEGER NOT NULL,
  last_seq   INTEGER NOT NULL,
  PRIMARY KEY (run_id, step_path)
);
CREATE INDEX steps_by_order ON steps (run_id, first_seq);
)sql";

// Version 2: the per-workflow KV memory behind the memory_get / memory_put tools.
constexpr const char* kV2KvMemory = R"sql(
CREATE TABLE kv (
  workflow   TEXT NOT NULL,
  key        TEXT NOT NULL,
  value      TEXT NOT NULL CHECK (json_valid(value)),
  updated_at TEXT NOT NULL,
  PRIMARY KEY (workflow, key)
);
)sql";

// Version 3: run leases. One row per run that a process is executing: who (owner id, pid, host),
// its last heartbeat and when the lease expires (Unix ms). `dloop run`, `resume` and the server
// take the lease in one transaction before executing, and every commit of theirs checks it, so
// two processes never execute one run; a crashed owner's lease simply expires.
constexpr const char* kV3RunLeases = R"sql(
CREATE TABLE run_leases (
  run_id       TEXT PRIMARY KEY NOT NULL REFERENCES runs (id),
  owner        TEXT NOT NULL,
  pid          INTEGER NOT NULL DEFAULT 0,
  host         TEXT NOT NULL DEFAULT '',
  acquired_ms  INTEGER NOT NULL,
  heartbeat_ms INTEGER NOT NULL,
  expires_ms   INTEGER NOT NULL
);
)sql";

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> list = {
      {1, "event log: runs, events, steps", kV1EventLog},
      {2, "per-workflow kv memory", kV2KvMemory},
      {3, "run leases", kV3RunLeases},
  };
  return list;
}

base::Result<int64_t> query_int(sqlite3* db, const char* sql, std::string_view what) {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(s);
    return sqlite_status(db, rc, what);
  }
  rc = sqlite3_step(s);
  int64_t v = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    base::Status st = sqlite_status(db, rc, what);
    sqlite3_finalize(s);
    return st;
  }
  sqlite3_finalize(s);
  return v;
}

}  // namespace

int64_t latest_version() { return migrations().back().version; }

base::Result<int64_t> inspect(sqlite3* db) {
  DLOOP_ASSIGN_OR_RETURN(int64_t app_id, query_int(db, "PRAGMA application_id", "reading the database header"));
  DLOOP_ASSIGN_OR_RETURN(int64_t has_version_table,
                         query_int(db,
                                   "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
                                   "name = 'schema_version'",
                                   "reading the schema"));
  DLOOP_ASSIGN_OR_RETURN(int64_t tables, query_int(db,
                                                   "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
                                                   "name NOT LIKE 'sqlite_%'",
                                                   "reading the schema"));
  if (app_id != 0 && app_id != kApplicationId) {
    return base::invalid_argument("not a dloop database (application_id " + std::to_string(app_id) + ")");
  }
  if (has_version_table == 0) {
    if (tables > 0) return base::invalid_argument("not a dloop database (it has tables but no schema_version)");
    return int64_t{0};
  }
  DLOOP_ASSIGN_OR_RETURN(int64_t version, query_int(db, "SELECT coalesce(max(version), 0) FROM schema_version",
                                                    "reading the schema version"));
  if (version > latest_version()) {
    return base::unimplemented("the database has schema version " + std::to_string(version) +
                               ", newer than this dloop supports (" + std::to_string(latest_version()) +
                               "); upgrade dloop to open it");
  }
  return version;
}

base::Result<int64_t> migrate(sqlite3* db, const std::string& now_iso) {
  DLOOP_ASSIGN_OR_RETURN(int64_t version, inspect(db));
  if (version == latest_version()) return version;
  DLOOP_RETURN_IF_ERROR(exec(db, "BEGIN IMMEDIATE", "migrating the schema: begin"));
  auto body = [&]() -> base::Result<int64_t> {
    DLOOP_ASSIGN_OR_RETURN(int64_t current, inspect(db));  // another process may have migrated
    if (current == latest_version()) return current;
    DLOOP_RETURN_IF_ERROR(exec(db,
                               "CREATE TABLE IF NOT EXISTS schema_version ("
                               " version INTEGER PRIMARY KEY NOT NULL,"
                               " name TEXT NOT NULL,"
                               " applied_at TEXT NOT NULL)",
                               "migrating the schema: schema_version"));
    const std::string set_id = "PRAGMA application_id = " + std::to_string(kApplicationId);
    DLOOP_RETURN_IF_ERROR(exec(db, set_id.c_str(), "migrating the schema: application_id"));
    for (const Migration& m : migrations()) {
      if (m.version <= current) continue;
      const std::string what = "migrating the schema to version " + std::to_string(m.version);
      DLOOP_RETURN_IF_ERROR(exec(db, m.sql, what));
      sqlite3_stmt* s = nullptr;
      int rc = sqlite3_prepare_v2(db, "INSERT INTO schema_version (version, name, applied_at) VALUES (?1, ?2, ?3)",
                                  -1, &s, nullptr);
      if (rc == SQLITE_OK) {
        sqlite3_bind_int64(s, 1, m.version);
        sqlite3_bind_text(s, 2, m.name, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, now_iso.c_str(), -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(s);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
      }
      base::Status st = rc == SQLITE_OK ? base::Status() : sqlite_status(db, rc, what);
      sqlite3_finalize(s);
      DLOOP_RETURN_IF_ERROR(st);
    }
    DLOOP_RETURN_IF_ERROR(exec(db, "COMMIT", "migrating the schema: commit"));
    return latest_version();
  };
  auto result = body();
  if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  return result;
}

}  // namespace dloop::memory::detail
