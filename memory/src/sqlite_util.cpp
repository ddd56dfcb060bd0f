// SQLite result codes as Status values, the statement wrapper and the statement cache; see
// sqlite_util.h.
#include "sqlite_util.h"

#include <cstdio>
#include <ctime>

namespace dloop::memory::detail {

base::Code code_for(int rc) {
  switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE: return base::Code::kOk;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_PROTOCOL: return base::Code::kUnavailable;
    case SQLITE_FULL:
    case SQLITE_NOMEM: return base::Code::kResourceExhausted;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return base::Code::kDataLoss;
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM: return base::Code::kIo;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG:
    case SQLITE_RANGE: return base::Code::kInvalidArgument;
    case SQLITE_INTERRUPT:
    case SQLITE_ABORT: return base::Code::kCancelled;
    default: return base::Code::kInternal;
  }
}

const char* rc_name(int rc) {
  switch (rc & 0xff) {
    case SQLITE_OK: return "SQLITE_OK";
    case SQLITE_ERROR: return "SQLITE_ERROR";
    case SQLITE_INTERNAL: return "SQLITE_INTERNAL";
    case SQLITE_PERM: return "SQLITE_PERM";
    case SQLITE_ABORT: return "SQLITE_ABORT";
    case SQLITE_BUSY: return "SQLITE_BUSY";
    case SQLITE_LOCKED: return "SQLITE_LOCKED";
    case SQLITE_NOMEM: return "SQLITE_NOMEM";
    case SQLITE_READONLY: return "SQLITE_READONLY";
    case SQLITE_INTERRUPT: return "SQLITE_INTERRUPT";
    case SQLITE_IOERR: return "SQLITE_IOERR";
    case SQLITE_CORRUPT: return "SQLITE_CORRUPT";
    case SQLITE_FULL: return "SQLITE_FULL";
    case SQLITE_CANTOPEN: return "SQLITE_CANTOPEN";
    case SQLITE_PROTOCOL: return "SQLITE_PROTOCOL";
    case SQLITE_SCHEMA: return "SQLITE_SCHEMA";
    case SQLITE_TOOBIG: return "SQLITE_TOOBIG";
    case SQLITE_CONSTRAINT: return "SQLITE_CONSTRAINT";
    case SQLITE_MISMATCH: return "SQLITE_MISMATCH";
    case SQLITE_MISUSE: return "SQLITE_MISUSE";
    case SQLITE_RANGE: return "SQLITE_RANGE";
    case SQLITE_NOTADB: return "SQLITE_NOTADB";
    default: return "SQLITE_UNKNOWN";
  }
}

base::Status sqlite_status(sqlite3* db, int rc, std::string_view what) {
  // sqlite3_errmsg describes the most recent failure on db; fall back to the generic text.
  const char* msg = (db != nullptr && (sqlite3_errcode(db) & 0xff) == (rc & 0xff)) ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string text = std::string(what) + ": " + msg + " [" + rc_name(rc) + "]";
  base::Code code = code_for(rc);
  if (code == base::Code::kOk) code = base::Code::kInternal;
  return base::Status(code, std::move(text));
}

Stmt::~Stmt() {
  if (s_ != nullptr) {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
}

Stmt::Stmt(Stmt&& other) noexcept : db_(other.db_), s_(other.s_), what_(other.what_), bind_rc_(other.bind_rc_) {
  other.s_ = nullptr;
}

void Stmt::note_bind(int rc) {
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

Stmt& Stmt::bind(int index, std::string_view text) {
  note_bind(sqlite3_bind_text64(s_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Stmt& Stmt::bind(int index, int64_t value) {
  note_bind(sqlite3_bind_int64(s_, index, value));
  return *this;
}

Stmt& Stmt::bind_null(int index) {
  note_bind(sqlite3_bind_null(s_, index));
  return *this;
}

Stmt& Stmt::bind_opt(int index, bool present, std::string_view text) {
  return present ? bind(index, text) : bind_null(index);
}

base::Result<bool> Stmt::step() {
  if (bind_rc_ != SQLITE_OK) return sqlite_status(db_, bind_rc_, what_);
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return sqlite_status(db_, rc, what_);
}

base::Status Stmt::run() {
  while (true) {
    auto r = step();
    if (!r.ok()) return r.status();
    if (!*r) return base::Status();
  }
}

bool Stmt::is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }

int64_t Stmt::int_at(int col) const { return sqlite3_column_int64(s_, col); }

std::string Stmt::text_at(int col) const {
  const unsigned char* p = sqlite3_column_text(s_, col);
  if (p == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(s_, col)));
}

base::Result<Stmt> StatementCache::get(const char* sql, std::string_view what) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return Stmt(db_, it->second, what);
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(s);
    return sqlite_status(db_, rc, what);
  }
  cache_.emplace(sql, s);
  return Stmt(db_, s, what);
}

void StatementCache::clear() {
  for (auto& [sql, s] : cache_) sqlite3_finalize(s);
  cache_.clear();
}

base::Status exec(sqlite3* db, const char* sql, std::string_view what) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  sqlite3_free(err);  // sqlite3_errmsg(db) still holds the same text for sqlite_status
  if (rc == SQLITE_OK) return base::Status();
  return sqlite_status(db, rc, what);
}

std::string iso_time(int64_t unix_ms) {
  time_t secs = static_cast<time_t>(unix_ms / 1000);
  int ms = static_cast<int>(unix_ms % 1000);
  if (ms < 0) {
    ms += 1000;
    --secs;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return buf;
}

}  // namespace dloop::memory::detail
