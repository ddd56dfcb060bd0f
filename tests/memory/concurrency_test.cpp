// Concurrent use: two threads on one Store, two Stores (connections) on one file, readers that
// never see a partial turn, and SQLITE_BUSY after busy_timeout reported as unavailable.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <thread>

#include "dloop/memory/store.h"
#include "test_util.h"

namespace dloop::memory {
namespace {

using base::Json;
using namespace testing_util;

constexpr int kTurnsPerThread = 150;

// Each turn's three events carry (writer, turn); checks seq is 1..n without gaps and that every
// turn's events sit next to each other (one transaction per turn).
void expect_gap_free_turns(Store& store, const std::string& id, size_t writers) {
  auto events = store.events(id);
  ASSERT_TRUE(events.ok()) << events.status().to_string();
  ASSERT_EQ(events->size(), 1 + writers * kTurnsPerThread * 3);
  for (size_t i = 0; i < events->size(); ++i) ASSERT_EQ((*events)[i].seq, int64_t(i + 1));
  for (size_t i = 1; i < events->size(); i += 3) {
    const Json* who = (*events)[i].payload.find("writer");
    ASSERT_NE(who, nullptr);
    for (size_t k = 1; k < 3; ++k) {
      EXPECT_EQ(*(*events)[i + k].payload.find("writer"), *who) << "turn split at seq " << i + k + 1;
      EXPECT_EQ((*events)[i + k].turn, (*events)[i].turn);
    }
  }
  EXPECT_TRUE(store.check_integrity().ok());
}

std::vector<NewEvent> tagged_turn(int writer, int turn) {
  std::vector<NewEvent> events = agent_turn("step-" + std::to_string(writer), turn, "tool", Json(turn));
  for (auto& e : events) e.payload.set("writer", writer);
  return events;
}

TEST(Concurrency, TwoThreadsShareOneStore) {
  TempDb db;
  auto store = open_or_die(db.path());
  std::string id = *store->create_run(new_run());
  std::atomic<int> failures{0};
  auto writer = [&](int w) {
    for (int t = 1; t <= kTurnsPerThread; ++t) {
      if (!store->append(id, tagged_turn(w, t)).ok()) ++failures;
    }
  };
  std::thread a(writer, 0), b(writer, 1);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
  expect_gap_free_turns(*store, id, 2);
}

TEST(Concurrency, TwoConnectionsOnOneFile) {
  TempDb db;
  auto first = open_or_die(db.path());
  auto second = open_or_die(db.path());
  std::string id = *first->create_run(new_run());
  std::atomic<int> failures{0};
  auto writer = [&](Store* store, int w) {
    for (int t = 1; t <= kTurnsPerThread; ++t) {
      auto r = store->append(id, tagged_turn(w, t));
      if (!r.ok()) {
        ADD_FAILURE() << r.status().to_string();
        ++failures;
      }
    }
  };
  // A third connection reads while they write: it must never see part of a turn.
  std::atomic<bool> done{false};
  std::atomic<int> torn{0};
  auto reader_store = open_or_die(db.path());
  std::thread reader([&] {
    while (!done) {
      auto events = reader_store->events(id);
      if (events.ok() && (events->size() - 1) % 3 != 0) ++torn;
    }
  });
  std::thread a(writer, first.get(), 0), b(writer, second.get(), 1);
  a.join();
  b.join();
  done = true;
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(torn.load(), 0);
  expect_gap_free_turns(*first, id, 2);
  EXPECT_EQ(second->get_run(id)->last_seq, int64_t(1 + 2 * kTurnsPerThread * 3));
}

TEST(Concurrency, BusyAfterTimeoutIsUnavailable) {
  TempDb db;
  StoreOptions o = test_options();
  o.busy_timeout_ms = 100;
  auto store = open_or_die(db.path(), o);
  std::string id = *store->create_run(new_run());

  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.path().c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto r = store->append(id, agent_turn("s", 1, "t", Json(1)));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), base::Code::kUnavailable);
  EXPECT_NE(r.status().message().find("SQLITE_BUSY"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(id), std::string::npos) << r.status().message();
  EXPECT_EQ(store->kv_put("wf", "k", Json(1)).code(), base::Code::kUnavailable);
  // Reads go on beside the writer (WAL).
  EXPECT_EQ(store->get_run(id)->last_seq, 1);
  ASSERT_EQ(sqlite3_exec(raw, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);

  auto ok = store->append(id, agent_turn("s", 1, "t", Json(1)));
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(*ok, 4);
}

}  // namespace
}  // namespace dloop::memory
