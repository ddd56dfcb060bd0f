// Fault injection through the dloop_fault VFS: for every N until a commit no longer reaches its
// Nth write, fail that write (I/O error or disk full, once or sticky, with FULL and NORMAL sync)
// and check that the error is reported, that the log holds the whole turn or none of it, that the
// Store keeps working, and that a fresh connection sees the same consistent database.
#include <gtest/gtest.h>

#include <ostream>

#include "dloop/memory/fault_vfs.h"
#include "dloop/memory/store.h"
#include "test_util.h"

namespace dloop::memory {
namespace {

using base::Json;
using namespace testing_util;

struct FaultCase {
  fault_vfs::Fault fault;
  bool sticky;
  StoreOptions::Sync sync;
};

// Names the case in test output (gtest would otherwise print the struct's bytes).
void PrintTo(const FaultCase& c, std::ostream* os) {
  *os << (c.fault == fault_vfs::Fault::kDiskFull ? "disk full" : "I/O error") << (c.sticky ? ", sticky" : "")
      << (c.sync == StoreOptions::Sync::kFull ? ", synchronous=FULL" : ", synchronous=NORMAL");
}

StoreOptions fault_options(StoreOptions::Sync sync) {
  StoreOptions o = test_options(sync);
  o.vfs = fault_vfs::name();
  return o;
}

int64_t event_count(Store& store, const std::string& id) {
  auto events = store.events(id);
  EXPECT_TRUE(events.ok()) << events.status().to_string();
  if (!events.ok()) return -1;
  for (size_t i = 0; i < events->size(); ++i) EXPECT_EQ((*events)[i].seq, int64_t(i + 1));
  return static_cast<int64_t>(events->size());
}

void expect_fault_status(const base::Status& st, fault_vfs::Fault fault) {
  if (fault == fault_vfs::Fault::kDiskFull) {
    EXPECT_EQ(st.code(), base::Code::kResourceExhausted) << st.to_string();
    EXPECT_NE(st.message().find("SQLITE_FULL"), std::string::npos) << st.message();
  } else {
    EXPECT_EQ(st.code(), base::Code::kIo) << st.to_string();
    EXPECT_NE(st.message().find("SQLITE_IOERR"), std::string::npos) << st.message();
  }
}

class FaultTest : public ::testing::TestWithParam<FaultCase> {
 protected:
  void TearDown() override { fault_vfs::disarm(); }
};

TEST_P(FaultTest, FailedTurnLeavesNoPartialTurn) {
  const FaultCase c = GetParam();
  const std::string filler(6000, 'f');  // spreads the turn over several pages
  int failed_commits = 0;
  for (int64_t n = 1; n < 500; ++n) {
    SCOPED_TRACE("failing write #" + std::to_string(n));
    TempDb db;
    auto store = open_or_die(db.path(), fault_options(c.sync));
    ASSERT_NE(store, nullptr);
    std::string id = *store->create_run(new_run());
    ASSERT_TRUE(store->append(id, agent_turn("s", 1, "t", Json(1), filler)).ok());
    const int64_t before = event_count(*store, id);

    Batch turn(id);
    for (auto& e : agent_turn("s", 2, "t", Json(2), filler)) turn.append(std::move(e));
    turn.kv_put("triage", "turn", Json(2));
    fault_vfs::arm(n, c.fault, c.sticky);
    auto r = store->commit(turn);
    const int64_t failures = fault_vfs::failures();
    fault_vfs::disarm();
    if (failures == 0) {
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      EXPECT_GT(failed_commits, 3) << "the commit should span several writes";
      return;
    }
    if (!r.ok()) {
      ++failed_commits;
      expect_fault_status(r.status(), c.fault);
      EXPECT_NE(r.status().message().find(id), std::string::npos) << r.status().message();
    }
    // All of the turn or none of it, events and KV write together.
    const int64_t after = event_count(*store, id);
    EXPECT_TRUE(after == before || after == before + 3) << before << " -> " << after;
    EXPECT_EQ(store->kv_get("triage", "turn")->has_value(), after == before + 3);
    if (!r.ok() && c.sync == StoreOptions::Sync::kNormal) {
      EXPECT_EQ(after, before) << "no fsync to fail";
    }
    EXPECT_TRUE(store->check_integrity().ok()) << store->check_integrity().to_string();

    // The same Store goes on working once the fault is gone.
    auto next = store->append(id, agent_turn("s", 3, "t", Json(3)));
    ASSERT_TRUE(next.ok()) << next.status().to_string();
    EXPECT_EQ(*next, after + 3);
    store.reset();

    // A fresh connection (crash recovery of the WAL) sees the same log.
    auto reopened = open_or_die(db.path(), test_options());
    ASSERT_NE(reopened, nullptr);
    EXPECT_TRUE(reopened->check_integrity().ok()) << reopened->check_integrity().to_string();
    EXPECT_EQ(event_count(*reopened, id), after + 3);
  }
  FAIL() << "a commit never finished without reaching the planned failure";
}

TEST_P(FaultTest, FailedOpenLeavesAnUsableFile) {
  const FaultCase c = GetParam();
  for (int64_t n = 1; n < 500; ++n) {
    SCOPED_TRACE("failing write #" + std::to_string(n));
    TempDb db;
    int64_t failures = 0;
    {
      fault_vfs::arm(n, c.fault, c.sticky);
      auto store = Store::open(db.path(), fault_options(c.sync));
      failures = fault_vfs::failures();
      fault_vfs::disarm();
      if (!store.ok()) expect_fault_status(store.status(), c.fault);
    }
    auto reopened = open_or_die(db.path(), test_options());
    ASSERT_NE(reopened, nullptr);
    EXPECT_EQ(reopened->schema_version(), Store::latest_schema_version());
    EXPECT_TRUE(reopened->check_integrity().ok());
    EXPECT_TRUE(reopened->create_run(new_run()).ok());
    if (failures == 0) return;
  }
  FAIL() << "open never finished without reaching the planned failure";
}

TEST_P(FaultTest, FailedCreateRunLeavesNoRun) {
  const FaultCase c = GetParam();
  for (int64_t n = 1; n < 500; ++n) {
    SCOPED_TRACE("failing write #" + std::to_string(n));
    TempDb db;
    auto store = open_or_die(db.path(), fault_options(c.sync));
    ASSERT_NE(store, nullptr);
    fault_vfs::arm(n, c.fault, c.sticky);
    auto id = store->create_run(new_run());
    const int64_t failures = fault_vfs::failures();
    fault_vfs::disarm();
    if (!id.ok()) expect_fault_status(id.status(), c.fault);
    auto runs = store->list_runs();
    ASSERT_TRUE(runs.ok());
    if (id.ok()) {
      ASSERT_EQ(runs->size(), 1u);
      EXPECT_EQ(store->events(*id)->size(), 1u);
    } else if (c.sync == StoreOptions::Sync::kNormal) {
      EXPECT_TRUE(runs->empty());
    }
    EXPECT_TRUE(store->check_integrity().ok());
    if (failures == 0) return;
  }
  FAIL() << "create_run never finished without reaching the planned failure";
}

INSTANTIATE_TEST_SUITE_P(
    Faults, FaultTest,
    ::testing::Values(FaultCase{fault_vfs::Fault::kIoError, false, StoreOptions::Sync::kFull},
                      FaultCase{fault_vfs::Fault::kIoError, false, StoreOptions::Sync::kNormal},
                      FaultCase{fault_vfs::Fault::kDiskFull, false, StoreOptions::Sync::kFull},
                      FaultCase{fault_vfs::Fault::kDiskFull, true, StoreOptions::Sync::kNormal}),
    [](const ::testing::TestParamInfo<FaultCase>& info) {
      std::string name = info.param.fault == fault_vfs::Fault::kDiskFull ? "DiskFull" : "IoError";
      if (info.param.sticky) name += "Sticky";
      name += info.param.sync == StoreOptions::Sync::kFull ? "Full" : "Normal";
      return name;
    });

TEST(FaultVfs, CountsWritesAndPassesThroughWhenDisarmed) {
  TempDb db;
  auto store = open_or_die(db.path(), fault_options(StoreOptions::Sync::kFull));
  ASSERT_NE(store, nullptr);
  fault_vfs::reset_count();
  std::string id = *store->create_run(new_run());
  EXPECT_GT(fault_vfs::writes(), 0);
  EXPECT_EQ(fault_vfs::failures(), 0);
  EXPECT_EQ(store->events(id)->size(), 1u);
}

}  // namespace
}  // namespace dloop::memory
