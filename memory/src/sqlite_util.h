// Thin helpers over the SQLite3 C API for the store: result codes to Status, a borrowed
// prepared-statement handle that resets itself, and a per-connection statement cache.
// Private to memory/. Not thread-safe: the Store's mutex guards the connection and its cache.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "dloop/base/status.h"

namespace dloop::memory::detail {

// The Status for SQLite result code `rc` on `db` (may be null): the code mapped as store.h
// documents, the message "WHAT: sqlite's message [SQLITE_NAME]".
base::Status sqlite_status(sqlite3* db, int rc, std::string_view what);
base::Code code_for(int rc);
const char* rc_name(int rc);  // "SQLITE_BUSY", ... for the primary code

// A cached statement in use: bind, step, read columns. Resets and clears bindings when it goes
// out of scope so the cache can hand it out again. Bind errors are kept and reported by step().
class Stmt {
 public:
  Stmt(sqlite3* db, sqlite3_stmt* stmt, std::string_view what) : db_(db), s_(stmt), what_(what) {}
  ~Stmt();
  Stmt(Stmt&& other) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt& operator=(Stmt&&) = delete;

  Stmt& bind(int index, std::string_view text);
  Stmt& bind(int index, int64_t value);
  Stmt& bind_null(int index);
  // Binds text, or NULL when `present` is false.
  Stmt& bind_opt(int index, bool present, std::string_view text);

  // true: a row is ready; false: done. Errors carry `what`.
  base::Result<bool> step();
  // Steps to completion, ignoring rows.
  base::Status run();

  bool is_null(int col) const;
  int64_t int_at(int col) const;
  std::string text_at(int col) const;  // "" for NULL
  sqlite3_stmt* raw() const { return s_; }

 private:
  void note_bind(int rc);

  sqlite3* db_;
  sqlite3_stmt* s_;
  std::string_view what_;  // static text naming the operation, for error messages
  int bind_rc_ = SQLITE_OK;
};

class StatementCache {
 public:
  StatementCache() = default;
  ~StatementCache() { clear(); }
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

  void set_db(sqlite3* db) { db_ = db; }
  // Prepares `sql` once per connection (SQLITE_PREPARE_PERSISTENT) and lends it out. `sql` and
  // `what` must be string literals (the cache keys on the text; `what` is kept by reference).
  base::Result<Stmt> get(const char* sql, std::string_view what);
  void clear();

 private:
  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
};

// Runs one or more SQL statements without results (DDL, PRAGMA, BEGIN/COMMIT).
base::Status exec(sqlite3* db, const char* sql, std::string_view what);

// "2026-12-02T13:28:50.123Z" for milliseconds since the epoch.
std::string iso_time(int64_t unix_ms);

}  // namespace dloop::memory::detail
