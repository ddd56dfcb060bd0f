// `dloop runs list` and `dloop runs show` on a database built through the Store API, run as the
// real binary: tables, --json, filters, the default path ($DLOOP_DB, ./dloop.db), and exit 2 for
// a missing database, an unknown run id and bad usage.
#include <gtest/gtest.h>

#include "../common/run_command.h"
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "dloop/base/json.h"
#include "dloop/memory/store.h"

namespace dloop::memory {
namespace {

using base::Json;

using dloop::test::Outcome;

// Runs `ENV dloop ARGS` through the shell in `dir` (when given), capturing stdout and stderr.
Outcome run_dloop(const std::string& args, const std::string& env = "", const std::string& dir = "") {
  return dloop::test::run_command((dir.empty() ? "" : "cd '" + dir + "' && ") + "env -u DLOOP_DB " + env + " " +
                                  std::string(DLOOP_BINARY) + " " + args);
}

class RunsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "/dloop_runs_cli_" + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
    db_ = dir_ + "/state.db";
    auto store = Store::open(db_);
    ASSERT_TRUE(store.ok()) << store.status().to_string();
    NewRun r;
    r.workflow = "ticket-triage";
    r.workflow_path = "examples/triage.yaml";
    r.inputs = Json::object({{"ticket", Json("printer on fire")}});
    done_ = *(*store)->create_run(r);
    Batch turn(done_);
    turn.append({"step_started", "classify", 1, 0, Json::object()})
        .append({"model_call", "classify", 1, 1,
                 Json::object({{"output", Json::object({{"name", Json("lookup_order")}})}})})
        .append({"tool_call", "classify", 1, 1,
                 Json::object({{"name", Json("lookup_order")},
                               {"arguments", Json::object({{"order_id", Json("A-17")}})}})})
        .append({"tool_result", "classify", 1, 1,
                 Json::object({{"name", Json("lookup_order")}, {"result", Json::object({{"status", Json("shipped")}})}})})
        .append({"step_completed", "classify", 1, 0,
                 Json::object({{"output", Json::object({{"category", Json("billing")}})}})});
    ASSERT_TRUE((*store)->commit(turn).ok());
    ASSERT_TRUE((*store)->finish_run(done_, RunStatus::kCompleted, Json::object({{"category", Json("billing")}}), "")
                    .ok());
    r.workflow = "deploy";
    failed_ = *(*store)->create_run(r);
    ASSERT_TRUE((*store)->finish_run(failed_, RunStatus::kFailed, Json(), "tool 'kubectl' timed out").ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_, db_, done_, failed_;
};

TEST_F(RunsCli, ListTable) {
  Outcome o = run_dloop("runs list --db " + db_);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("ID", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("STATUS"), std::string::npos);
  EXPECT_NE(o.out.find(done_), std::string::npos);
  EXPECT_NE(o.out.find(failed_), std::string::npos);
  EXPECT_NE(o.out.find("ticket-triage"), std::string::npos);
  EXPECT_NE(o.out.find("completed"), std::string::npos);
  EXPECT_LT(o.out.find(failed_), o.out.find(done_)) << "newest first";
}

TEST_F(RunsCli, ListJsonAndFilters) {
  Outcome o = run_dloop("runs list --json --db=" + db_);
  ASSERT_EQ(o.code, 0) << o.err;
  auto j = Json::parse(o.out);
  ASSERT_TRUE(j.ok()) << o.out;
  ASSERT_EQ(j->find("runs")->size(), 2u);
  EXPECT_EQ(*j->find("runs")->as_array()[0].find("id"), Json(failed_));

  o = run_dloop("runs list --json --status completed --db " + db_);
  ASSERT_EQ(o.code, 0) << o.err;
  j = Json::parse(o.out);
  ASSERT_TRUE(j.ok());
  ASSERT_EQ(j->find("runs")->size(), 1u);
  EXPECT_EQ(*j->find("runs")->as_array()[0].find("events"), Json(7));

  o = run_dloop("runs list --json --workflow deploy --limit 5 --db " + db_);
  j = Json::parse(o.out);
  ASSERT_TRUE(j.ok());
  ASSERT_EQ(j->find("runs")->size(), 1u);
  EXPECT_EQ(*j->find("runs")->as_array()[0].find("error"), Json("tool 'kubectl' timed out"));

  o = run_dloop("runs list --status exploded --db " + db_);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("unknown status 'exploded'"), std::string::npos) << o.err;
}

TEST_F(RunsCli, ShowTable) {
  Outcome o = run_dloop("runs show " + done_ + " --db " + db_);
  ASSERT_EQ(o.code, 0) << o.err;
  for (const char* want : {"ticket-triage", "examples/triage.yaml", "completed", "steps:", "classify", "events:",
                           "run_started", "tool_call", "lookup_order {\"order_id\":\"A-17\"}", "run_completed",
                           "{\"category\":\"billing\"}"}) {
    EXPECT_NE(o.out.find(want), std::string::npos) << want << "\n" << o.out;
  }
}

TEST_F(RunsCli, ShowJson) {
  Outcome o = run_dloop("runs show " + done_ + " --json --db " + db_);
  ASSERT_EQ(o.code, 0) << o.err;
  auto j = Json::parse(o.out);
  ASSERT_TRUE(j.ok()) << o.out;
  EXPECT_EQ(*j->find("run")->find("status"), Json("completed"));
  EXPECT_EQ(j->find("steps")->size(), 1u);
  const auto& events = j->find("events")->as_array();
  ASSERT_EQ(events.size(), 7u);
  EXPECT_EQ(*events[4].find("payload")->find("result")->find("status"), Json("shipped"));
  EXPECT_EQ(*events[6].find("type"), Json("run_completed"));
}

TEST_F(RunsCli, DefaultDatabasePath) {
  Outcome o = run_dloop("runs list --json", "DLOOP_DB=" + db_);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find(done_), std::string::npos);
  std::filesystem::copy_file(db_, dir_ + "/dloop.db");
  o = run_dloop("runs list", "", dir_);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find(done_), std::string::npos);
}

TEST_F(RunsCli, Errors) {
  Outcome o = run_dloop("runs show r-nope --db " + db_);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("no run 'r-nope'"), std::string::npos) << o.err;

  o = run_dloop("runs list --db " + dir_ + "/missing.db");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("no database at"), std::string::npos) << o.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/missing.db")) << "a reader creates nothing";
  o = run_dloop("runs list", "", dir_);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("'dloop.db'"), std::string::npos) << o.err;

  o = run_dloop("runs");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("usage: dloop runs list"), std::string::npos) << o.err;
  o = run_dloop("runs lst");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("did you mean 'list'"), std::string::npos) << o.err;
  o = run_dloop("runs show --db " + db_);
  EXPECT_EQ(o.code, 2);
  o = run_dloop("runs list --limt 3 --db " + db_);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("did you mean '--limit'"), std::string::npos) << o.err;
  o = run_dloop("runs --help");
  EXPECT_EQ(o.code, 0);
  EXPECT_NE(o.out.find("dloop runs show RUN_ID"), std::string::npos);
  o = run_dloop("runs show --help");
  EXPECT_EQ(o.code, 0);
  EXPECT_NE(o.out.find("--json"), std::string::npos);
}

TEST_F(RunsCli, EmptyDatabase) {
  std::string empty = dir_ + "/empty.db";
  ASSERT_TRUE(Store::open(empty).ok());
  Outcome o = run_dloop("runs list --db " + empty);
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "no runs\n");
}

}  // namespace
}  // namespace dloop::memory
