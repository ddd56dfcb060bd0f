// sqlite_query: runs one parameterised SQL statement against a SQLite database and returns
// {columns, rows, truncated} (plus `changes` for writes). Read-only unless `with: {readonly:
// false}`: the database is opened with SQLITE_OPEN_READONLY and a statement that would write is
// refused before it runs. ATTACH is disabled (limit 0), URIs are not interpreted, a progress
// handler stops the statement at the deadline or on cancellation. Runs on the tool pool; each call
// opens its own connection. `with:` database (required; relative to the workspace), readonly,
// create, max_rows (default 1000), timeout (default 10s).
#include <sqlite3.h>

#include <cmath>

#include "builtin/builtin.h"
#include "dloop/base/strings.h"
#include "dloop/tools/blocking.h"

namespace dloop::tools::builtin {
namespace {

struct Config {
  std::string database;
  bool readonly = true;
  bool create = false;
  int64_t max_rows = 0;
  int64_t timeout_ms = 0;
};

struct Db {
  sqlite3* db = nullptr;
  sqlite3_stmt* stmt = nullptr;
  ~Db() {
    sqlite3_finalize(stmt);
    sqlite3_close_v2(db);
  }
};

struct Watch {
  const StopFlag* stop;
  Clock::time_point deadline;
};

std::string base64(const unsigned char* data, size_t n) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = uint32_t(data[i]) << 16 | (i + 1 < n ? uint32_t(data[i + 1]) << 8 : 0) | (i + 2 < n ? data[i + 2] : 0);
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += i + 1 < n ? kAlphabet[v >> 6 & 63] : '=';
    out += i + 2 < n ? kAlphabet[v & 63] : '=';
  }
  return out;
}

Json column_value(sqlite3_stmt* stmt, int i) {
  switch (sqlite3_column_type(stmt, i)) {
    case SQLITE_INTEGER: return Json(static_cast<int64_t>(sqlite3_column_int64(stmt, i)));
    case SQLITE_FLOAT: {
      double d = sqlite3_column_double(stmt, i);
      return std::isfinite(d) ? Json(d) : Json();
    }
    case SQLITE_TEXT: {
      std::string s(reinterpret_cast<const char*>(sqlite3_column_text(stmt, i)), sqlite3_column_bytes(stmt, i));
      if (!base::find_invalid_utf8(s)) return Json(std::move(s));
      [[fallthrough]];  // not UTF-8: return the bytes like a blob
    }
    case SQLITE_BLOB: {
      Json blob = Json::object();
      auto* p = static_cast<const unsigned char*>(sqlite3_column_blob(stmt, i));
      blob.set("blob_base64", base64(p, static_cast<size_t>(sqlite3_column_bytes(stmt, i))));
      return blob;
    }
    default: return Json();
  }
}

ToolResult bind_params(sqlite3_stmt* stmt, const Json& params) {
  int want = sqlite3_bind_parameter_count(stmt);
  int got = params.is_array() ? static_cast<int>(params.size()) : 0;
  if (want != got) {
    return fail(ToolErrorKind::kInvalidArguments, "the statement has " + std::to_string(want) +
                                                      " parameter(s) but params has " + std::to_string(got));
  }
  for (int i = 0; i < got; ++i) {
    const Json& p = params.as_array()[static_cast<size_t>(i)];
    int rc = p.is_int() ? sqlite3_bind_int64(stmt, i + 1, p.as_int())
             : p.is_double() ? sqlite3_bind_double(stmt, i + 1, p.as_double())
             : p.is_bool() ? sqlite3_bind_int(stmt, i + 1, p.as_bool() ? 1 : 0)
             : p.is_string() ? sqlite3_bind_text(stmt, i + 1, p.as_string().data(),
                                                 static_cast<int>(p.as_string().size()), SQLITE_TRANSIENT)
                             : sqlite3_bind_null(stmt, i + 1);
    if (rc != SQLITE_OK) return fail(ToolErrorKind::kInvalidArguments, "cannot bind parameter " + std::to_string(i + 1));
  }
  return ToolResult::success(Json());
}

ToolResult run_query(const Config& cfg, const ToolContext& ctx, const std::string& sql, const Json& params,
                     const StopFlag& stop) {
  std::string path = cfg.database;
  if (path[0] != '/' && !ctx.workspace.empty()) path = (ctx.workspace / path).string();
  int flags = (cfg.readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (cfg.create ? SQLITE_OPEN_CREATE : 0)) |
              SQLITE_OPEN_NOMUTEX;
  Db h;
  if (sqlite3_open_v2(path.c_str(), &h.db, flags, nullptr) != SQLITE_OK) {
    return fail(ToolErrorKind::kFailed, "cannot open the database '" + path + "': " +
                                            std::string(h.db ? sqlite3_errmsg(h.db) : "out of memory"));
  }
  sqlite3_limit(h.db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_db_config(h.db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  Watch watch{&stop, deadline_for(ctx, cfg.timeout_ms)};
  sqlite3_busy_timeout(h.db, static_cast<int>(std::max<int64_t>(
      0, std::chrono::duration_cast<std::chrono::milliseconds>(watch.deadline - Clock::now()).count())));
  sqlite3_progress_handler(h.db, 1000, [](void* p) -> int {
    auto* w = static_cast<Watch*>(p);
    return w->stop->load() || Clock::now() >= w->deadline;
  }, &watch);

  const char* tail = nullptr;
  if (sqlite3_prepare_v2(h.db, sql.c_str(), static_cast<int>(sql.size()), &h.stmt, &tail) != SQLITE_OK) {
    return fail(ToolErrorKind::kInvalidArguments, std::string("SQL error: ") + sqlite3_errmsg(h.db));
  }
  if (h.stmt == nullptr) return fail(ToolErrorKind::kInvalidArguments, "the SQL has no statement");
  sqlite3_stmt* extra = nullptr;
  if (tail && *tail && sqlite3_prepare_v2(h.db, tail, -1, &extra, nullptr) == SQLITE_OK && extra != nullptr) {
    sqlite3_finalize(extra);
    return fail(ToolErrorKind::kInvalidArguments, "only one SQL statement per call");
  }
  bool writes = !sqlite3_stmt_readonly(h.stmt);
  if (cfg.readonly && writes) {
    return fail(ToolErrorKind::kDenied, "this database is read-only: the statement would modify it");
  }
  ToolResult bound = bind_params(h.stmt, params);
  if (!bound.ok()) return bound;

  Json columns = Json::array();
  int ncol = sqlite3_column_count(h.stmt);
  for (int i = 0; i < ncol; ++i) columns.push_back(Json(sqlite3_column_name(h.stmt, i)));
  Json rows = Json::array();
  bool truncated = false;
  int rc;
  while ((rc = sqlite3_step(h.stmt)) == SQLITE_ROW) {
    if (static_cast<int64_t>(rows.size()) >= cfg.max_rows) {
      truncated = true;
      break;
    }
    Json row = Json::array();
    for (int i = 0; i < ncol; ++i) row.push_back(column_value(h.stmt, i));
    rows.push_back(std::move(row));
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    if (rc == SQLITE_INTERRUPT) {
      return stop.load() ? fail(ToolErrorKind::kCancelled, "the query was cancelled")
                         : fail(ToolErrorKind::kTimeout, "the query did not finish in time and was stopped");
    }
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) return fail(ToolErrorKind::kFailed, "the database is busy; try again");
    return fail(ToolErrorKind::kFailed, std::string("SQL error: ") + sqlite3_errmsg(h.db));
  }
  Json out = Json::object();
  out.set("columns", std::move(columns));
  out.set("rows", std::move(rows));
  out.set("truncated", truncated);
  if (writes) out.set("changes", Json(static_cast<int64_t>(sqlite3_changes64(h.db))));
  return ToolResult::success(std::move(out));
}

class SqliteQuery final : public Tool {
 public:
  SqliteQuery(const BuiltinSpec& spec, Config cfg)
      : Tool(name_of(spec),
             description_of(spec, std::string(cfg.readonly ? "Runs a read-only" : "Runs a") +
                                      " SQL query (SQLite) with ? placeholders bound from params. Returns "
                                      "{columns, rows, truncated}."),
             builtin_schema(R"({"type": "object", "properties": {
                 "sql": {"type": "string", "minLength": 1, "description": "one SQL statement; use ? for values"},
                 "params": {"type": "array", "items": {"type": ["string", "number", "boolean", "null"]},
                            "description": "values for the ? placeholders, in order"}},
               "required": ["sql"], "additionalProperties": false})")),
        cfg_(std::move(cfg)) {}

  asio::awaitable<ToolResult> invoke(Json args, ToolContext ctx) override {
    std::string sql = string_arg(args, "sql");
    Json params = args.find("params") ? *args.find("params") : Json::array();
    auto work = [cfg = cfg_, ctx, sql, params](const StopFlag& stop) {
      return run_query(cfg, ctx, sql, params, stop);
    };
    auto op = run_blocking(ctx, std::move(work));
    co_return co_await std::move(op);
  }

 private:
  Config cfg_;
};

}  // namespace

base::Result<std::shared_ptr<Tool>> make_sqlite_query(const BuiltinSpec& spec, const BuiltinEnv&) {
  DLOOP_ASSIGN_OR_RETURN(auto with, WithConfig::open(name_of(spec), spec.with,
                                                     {"database", "readonly", "create", "max_rows", "timeout"}));
  Config cfg;
  DLOOP_ASSIGN_OR_RETURN(auto database, with.get_string("database"));
  if (!database) return base::invalid_argument(name_of(spec) + ": with.database is required (a SQLite file path)");
  cfg.database = *database;
  DLOOP_ASSIGN_OR_RETURN(cfg.readonly, with.get_bool("readonly", true));
  DLOOP_ASSIGN_OR_RETURN(cfg.create, with.get_bool("create", false));
  if (cfg.readonly && cfg.create) return base::invalid_argument(name_of(spec) + ": with.create needs readonly: false");
  DLOOP_ASSIGN_OR_RETURN(cfg.max_rows, with.get_int("max_rows", 1000, 1, 1'000'000));
  DLOOP_ASSIGN_OR_RETURN(cfg.timeout_ms, with.get_duration_ms("timeout", 10'000));
  return std::shared_ptr<Tool>(std::make_shared<SqliteQuery>(spec, std::move(cfg)));
}

}  // namespace dloop::tools::builtin
