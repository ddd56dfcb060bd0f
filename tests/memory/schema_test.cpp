// The database file itself: WAL mode, the append-only triggers, the schema_version table,
// migration of a version-1 fixture, refusal of newer, foreign, corrupt and missing databases.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <sstream>

#include "dloop/memory/store.h"
#include "test_util.h"

namespace dloop::memory {
namespace {

using base::Json;
using namespace testing_util;

// A raw connection for poking at the file behind the Store's back.
class Raw {
 public:
  explicit Raw(const std::string& path) { EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK); }
  ~Raw() { sqlite3_close(db_); }
  int exec(const std::string& sql) { return sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr); }
  std::string errmsg() const { return sqlite3_errmsg(db_); }
  std::string text(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
      const unsigned char* p = sqlite3_column_text(s, 0);
      out = p ? reinterpret_cast<const char*>(p) : "";
    }
    sqlite3_finalize(s);
    return out;
  }
  sqlite3* db() { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Schema, FileDatabaseUsesWalAndRecordsVersions) {
  TempDb db;
  {
    auto store = open_or_die(db.path());
    ASSERT_NE(store, nullptr);
    Raw raw(db.path());
    EXPECT_EQ(raw.text("PRAGMA journal_mode"), "wal");
    EXPECT_EQ(raw.text("PRAGMA application_id"), "1684828016");
    EXPECT_EQ(raw.text("SELECT group_concat(version) FROM schema_version"), "1,2,3");
  }
  // Reopening applies nothing twice.
  auto again = open_or_die(db.path());
  Raw raw(db.path());
  EXPECT_EQ(raw.text("SELECT count(*) FROM schema_version"), "3");
  EXPECT_EQ(again->schema_version(), Store::latest_schema_version());
}

TEST(Schema, EventsAreAppendOnly) {
  TempDb db;
  auto store = open_or_die(db.path());
  std::string id = *store->create_run(new_run());
  ASSERT_TRUE(store->append(id, agent_turn("s", 1, "t", Json(1))).ok());
  Raw raw(db.path());
  EXPECT_NE(raw.exec("UPDATE events SET payload = '{}' WHERE seq = 2"), SQLITE_OK);
  EXPECT_NE(raw.errmsg().find("append-only"), std::string::npos) << raw.errmsg();
  EXPECT_NE(raw.exec("DELETE FROM events WHERE seq = 4"), SQLITE_OK);
  EXPECT_NE(raw.errmsg().find("append-only"), std::string::npos) << raw.errmsg();
  EXPECT_NE(raw.exec("DELETE FROM events"), SQLITE_OK);
  EXPECT_EQ(raw.text("SELECT count(*) FROM events"), "4");
  // The JSON and status CHECK constraints hold too.
  EXPECT_NE(raw.exec("INSERT INTO events VALUES ('" + id + "', 5, 'x', '', 0, 0, 0, '{not json', 't')"), SQLITE_OK);
  EXPECT_NE(raw.exec("UPDATE runs SET status = 'exploded'"), SQLITE_OK);
  EXPECT_TRUE(store->check_integrity().ok());
}

TEST(Schema, IntegrityCheckFindsABrokenLog) {
  TempDb db;
  auto store = open_or_die(db.path());
  std::string id = *store->create_run(new_run());
  ASSERT_TRUE(store->append(id, agent_turn("s", 1, "t", Json(1))).ok());
  ASSERT_TRUE(store->check_integrity().ok());
  Raw raw(db.path());
  ASSERT_EQ(raw.exec("UPDATE runs SET last_seq = 9"), SQLITE_OK);
  auto st = store->check_integrity();
  EXPECT_EQ(st.code(), base::Code::kDataLoss);
  EXPECT_NE(st.message().find(id), std::string::npos) << st.message();
}

TEST(Schema, MigratesAVersion1Fixture) {
  TempDb db;
  {
    Raw raw(db.path());
    std::string sql = read_file(std::string(DLOOP_SOURCE_DIR) + "/tests/memory/fixtures/schema_v1.sql");
    ASSERT_FALSE(sql.empty());
    ASSERT_EQ(raw.exec(sql), SQLITE_OK) << raw.errmsg();
    ASSERT_EQ(raw.text("SELECT max(version) FROM schema_version"), "1");
  }
  auto store = open_or_die(db.path());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->schema_version(), Store::latest_schema_version());
  EXPECT_TRUE(store->check_integrity().ok()) << store->check_integrity().to_string();

  auto done = store->get_run("r-20261101-090000-00c0ffee");
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->status, RunStatus::kCompleted);
  EXPECT_EQ(done->outputs, Json::object({{"category", Json("bug")}}));
  EXPECT_EQ(store->events(done->id)->size(), 6u);
  EXPECT_EQ(store->steps(done->id)->front().output, Json::object({{"category", Json("bug")}}));

  // The interrupted run resumes: its recorded result is found, and new events continue its seq.
  const std::string id = "r-20261101-091500-0badf00d";
  auto recorded = store->recorded_tool_result(id, "classify", 1, 0);
  ASSERT_TRUE(recorded.ok() && recorded->has_value());
  EXPECT_EQ(*(*recorded)->payload.find("result"), Json::object({{"hits", Json(0)}}));
  auto seq = store->append(id, {ev(event_type::kStepCompleted, "classify", 1, 0,
                                   Json::object({{"output", Json("other")}}))});
  ASSERT_TRUE(seq.ok()) << seq.status().to_string();
  EXPECT_EQ(*seq, 4);
  // Version 2's table is usable.
  ASSERT_TRUE(store->kv_put("triage", "k", Json(1)).ok());
  EXPECT_EQ(**store->kv_get("triage", "k"), Json(1));
  RunFilter f;
  f.status = RunStatus::kRunning;
  EXPECT_EQ(store->list_runs(f)->size(), 1u);
}

TEST(Schema, RefusesANewerDatabase) {
  TempDb db;
  { ASSERT_NE(open_or_die(db.path()), nullptr); }
  {
    Raw raw(db.path());
    ASSERT_EQ(raw.exec("INSERT INTO schema_version VALUES (99, 'from the future', 'x')"), SQLITE_OK);
  }
  auto store = Store::open(db.path(), test_options());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), base::Code::kUnimplemented);
  EXPECT_NE(store.status().message().find("schema version 99"), std::string::npos) << store.status().message();
  EXPECT_NE(store.status().message().find("upgrade dloop"), std::string::npos);
  EXPECT_NE(store.status().message().find(db.path()), std::string::npos);
}

TEST(Schema, RefusesAForeignDatabase) {
  TempDb db;
  {
    Raw raw(db.path());
    ASSERT_EQ(raw.exec("CREATE TABLE customers (id INTEGER)"), SQLITE_OK);
  }
  auto store = Store::open(db.path(), test_options());
  EXPECT_EQ(store.status().code(), base::Code::kInvalidArgument);
  EXPECT_NE(store.status().message().find("not a dloop database"), std::string::npos);
  Raw raw(db.path());
  EXPECT_EQ(raw.text("PRAGMA journal_mode"), "delete") << "a refused file is left untouched";

  TempDb other;
  {
    Raw r2(other.path());
    ASSERT_EQ(r2.exec("PRAGMA application_id = 42"), SQLITE_OK);
  }
  EXPECT_EQ(Store::open(other.path(), test_options()).status().code(), base::Code::kInvalidArgument);
}

TEST(Schema, RefusesACorruptFile) {
  TempDb db;
  {
    std::ofstream out(db.path(), std::ios::binary);
    out << std::string(8192, 'x');
  }
  auto store = Store::open(db.path(), test_options());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), base::Code::kDataLoss) << store.status().to_string();
  EXPECT_NE(store.status().message().find("SQLITE_NOTADB"), std::string::npos) << store.status().message();
}

TEST(Schema, MissingFileWithoutCreate) {
  TempDb db;
  StoreOptions o = test_options();
  o.create_if_missing = false;
  auto store = Store::open(db.path(), o);
  EXPECT_EQ(store.status().code(), base::Code::kNotFound);
  std::ifstream probe(db.path());
  EXPECT_FALSE(probe.good()) << "nothing is created";
  EXPECT_EQ(Store::open("/nonexistent-dir/x.db", test_options()).status().code(), base::Code::kIo);
  EXPECT_EQ(Store::open("", test_options()).status().code(), base::Code::kInvalidArgument);
  o.vfs = "no-such-vfs";
  EXPECT_EQ(Store::open(":memory:", o).status().code(), base::Code::kInvalidArgument);
}

}  // namespace
}  // namespace dloop::memory
