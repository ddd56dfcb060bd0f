// sqlite_query: parameterised reads, the row cap, read-only refusal, writes when allowed, one
// statement per call, ATTACH disabled, the timeout.
#include <sqlite3.h>

#include "test_util.h"

namespace dloop::tools {
namespace {

using namespace testing;

class SqliteQuery : public ::testing::Test {
 protected:
  SqliteQuery() {
    h.set_workspace(ws.path());
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open((ws / "shop.db").c_str(), &db), SQLITE_OK);
    const char* sql =
        "CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT, balance REAL, photo BLOB);"
        "INSERT INTO customers VALUES (1, 'Ada', 12.5, x'00ff10'), (2, 'Bob', NULL, NULL), (3, 'Cy', 0, NULL);";
    EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  Harness h;
  TempDir ws;
};

TEST_F(SqliteQuery, SelectWithParams) {
  auto q = builtin("sqlite_query", R"({"database": "shop.db"})");
  ToolResult r = h.call(q, R"({"sql": "SELECT id, name, balance FROM customers WHERE id >= ? AND name != ? ORDER BY id",
                               "params": [1, "Cy"]})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value(), J(R"({"columns": ["id", "name", "balance"], "rows": [[1, "Ada", 12.5], [2, "Bob", null]],
                             "truncated": false})"));
  ToolResult blob = h.call(q, R"({"sql": "SELECT photo FROM customers WHERE id = ?", "params": [1.0]})");
  ASSERT_TRUE(blob.ok()) << blob.error().message;
  EXPECT_EQ(blob.value().find("rows")->as_array()[0], J(R"([{"blob_base64": "AP8Q"}])"));
  ToolResult typed = h.call(q, R"({"sql": "SELECT ?, ?, ?", "params": [true, null, "x"]})");
  ASSERT_TRUE(typed.ok());
  EXPECT_EQ(*typed.value().find("rows"), J(R"([[1, null, "x"]])"));
}

TEST_F(SqliteQuery, RowCap) {
  auto q = builtin("sqlite_query", R"({"database": "shop.db", "max_rows": 2})");
  ToolResult r = h.call(q, R"({"sql": "SELECT id FROM customers ORDER BY id"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r.value().find("rows"), J("[[1], [2]]"));
  EXPECT_EQ(*r.value().find("truncated"), Json(true));
}

TEST_F(SqliteQuery, ReadOnlyRefusesWrites) {
  auto q = builtin("sqlite_query", R"({"database": "shop.db"})");
  for (const char* sql : {"DELETE FROM customers", "UPDATE customers SET name = 'x'", "DROP TABLE customers",
                          "INSERT INTO customers(name) VALUES ('Eve')", "CREATE TABLE t(x)"}) {
    Json args = Json::object();
    args.set("sql", sql);
    EXPECT_TOOL_ERROR(h.run(invoke_validated(q, args, h.ctx())), ToolErrorKind::kDenied,
                      "this database is read-only: the statement would modify it");
  }
  ToolResult count = h.call(q, R"({"sql": "SELECT count(*) FROM customers"})");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count.value().find("rows"), J("[[3]]"));
}

TEST_F(SqliteQuery, WritesWhenAllowed) {
  auto q = builtin("sqlite_query", R"({"database": "shop.db", "readonly": false})");
  ToolResult w = h.call(q, R"({"sql": "UPDATE customers SET balance = ? WHERE balance IS NULL", "params": [5]})");
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w.value(), J(R"({"columns": [], "rows": [], "truncated": false, "changes": 1})"));
  auto create = builtin("sqlite_query", R"({"database": "new.db", "readonly": false, "create": true})");
  ASSERT_TRUE(h.call(create, R"j({"sql": "CREATE TABLE t(x)"})j").ok());
  EXPECT_TRUE(std::filesystem::exists(ws / "new.db"));
  auto no_create = builtin("sqlite_query", R"({"database": "other.db", "readonly": false})");
  EXPECT_TOOL_ERROR(h.call(no_create, R"({"sql": "SELECT 1"})"), ToolErrorKind::kFailed, "cannot open the database");
}

TEST_F(SqliteQuery, BadStatements) {
  auto q = builtin("sqlite_query", R"({"database": "shop.db", "readonly": false})");
  EXPECT_TOOL_ERROR(h.call(q, R"({"sql": "SELECT 1; DELETE FROM customers"})"), ToolErrorKind::kInvalidArguments,
                    "only one SQL statement per call");
  ToolResult trailing = h.call(q, R"({"sql": "SELECT 1; -- just a comment"})");
  EXPECT_TRUE(trailing.ok());
  EXPECT_TOOL_ERROR(h.call(q, R"({"sql": "SELEC 1"})"), ToolErrorKind::kInvalidArguments, "SQL error: near \"SELEC\"");
  EXPECT_TOOL_ERROR(h.call(q, R"({"sql": "SELECT ?", "params": []})"), ToolErrorKind::kInvalidArguments,
                    "the statement has 1 parameter(s) but params has 0");
  EXPECT_TOOL_ERROR(h.call(q, R"({"sql": "-- nothing"})"), ToolErrorKind::kInvalidArguments, "the SQL has no statement");
  EXPECT_TOOL_ERROR(h.call(q, R"({"sql": "SELECT 1", "params": [[1]]})"), ToolErrorKind::kInvalidArguments,
                    "#/params/0: expected string or number or boolean or null, got array");
  TempDir other;
  std::string attach = R"({"sql": "ATTACH DATABASE ')" + (other / "x.db").string() + R"(' AS x"})";
  EXPECT_TOOL_ERROR(h.call(q, attach), ToolErrorKind::kFailed, "too many attached databases");
  EXPECT_FALSE(std::filesystem::exists(other / "x.db"));
}

TEST_F(SqliteQuery, Timeout) {
  auto q = builtin("sqlite_query", R"({"database": "shop.db", "timeout": "200ms"})");
  auto start = Clock::now();
  ToolResult r = h.call(q, R"({"sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"})");
  EXPECT_TOOL_ERROR(r, ToolErrorKind::kTimeout, "did not finish in time");
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  // The call's own deadline stops it the same way (through invoke_validated and the stop flag).
  auto slow = builtin("sqlite_query", R"({"database": "shop.db", "timeout": "1h"})");
  ToolResult d = h.call(slow, R"({"sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"})",
                        h.ctx(std::chrono::milliseconds(200)));
  EXPECT_TOOL_ERROR(d, ToolErrorKind::kTimeout, "");
}

TEST_F(SqliteQuery, Config) {
  EXPECT_EQ(config_error("sqlite_query", "null"), "sqlite_query: with.database is required (a SQLite file path)");
  EXPECT_EQ(config_error("sqlite_query", R"({"database": "x.db", "create": true})"),
            "sqlite_query: with.create needs readonly: false");
  EXPECT_EQ(config_error("sqlite_query", R"({"database": "x.db", "read_only": true})"),
            "sqlite_query: unknown `with:` key 'read_only' (did you mean 'readonly'?); allowed: database, readonly, "
            "create, max_rows, timeout");
  EXPECT_EQ(config_error("sqlite_query", R"({"database": "x.db", "timeout": "soon"})"),
            "sqlite_query: with.timeout must be a positive duration such as \"10s\", \"500ms\" or \"2m\"");
  auto missing = builtin("sqlite_query", R"({"database": "missing.db"})");
  EXPECT_TOOL_ERROR(h.call(missing, R"({"sql": "SELECT 1"})"), ToolErrorKind::kFailed,
                    "cannot open the database '" + (ws / "missing.db").string() + "': unable to open database file");
}

}  // namespace
}  // namespace dloop::tools
