// A committed turn survives SIGKILL: a child process appends turns and reports each commit on a
// pipe; the parent kills it mid-stream and reopens the database. Every reported turn must be in
// the log, whole, and the log must be consistent (with both synchronous settings: NORMAL is
// durable against a process kill, FULL also against power loss, which a test cannot simulate).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dloop/memory/store.h"
#include "test_util.h"

namespace dloop::memory {
namespace {

using base::Json;
using namespace testing_util;

constexpr int kAckedTurns = 25;

[[noreturn]] void child_append_forever(const std::string& path, const std::string& id, StoreOptions::Sync sync,
                                       int ack_fd) {
  auto store = Store::open(path, test_options(sync));
  if (!store.ok()) _exit(3);
  for (int32_t turn = 1;; ++turn) {
    if (!(*store)->append(id, agent_turn("s", turn, "t", Json(turn))).ok()) _exit(4);
    if (write(ack_fd, &turn, sizeof turn) != sizeof turn) _exit(5);
  }
}

class Durability : public ::testing::TestWithParam<StoreOptions::Sync> {};

TEST_P(Durability, CommittedTurnsSurviveSigkill) {
  TempDb db;
  std::string id;
  {
    auto store = open_or_die(db.path());
    ASSERT_NE(store, nullptr);
    id = *store->create_run(new_run());
  }  // closed before fork: SQLite connections must not cross fork()
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    child_append_forever(db.path(), id, GetParam(), fds[1]);
  }
  close(fds[1]);
  int32_t acked = 0;
  while (acked < kAckedTurns) {
    int32_t turn = 0;
    ASSERT_EQ(read(fds[0], &turn, sizeof turn), ssize_t(sizeof turn)) << "child died early";
    acked = turn;
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  close(fds[0]);
  ASSERT_TRUE(WIFSIGNALED(status));

  auto store = open_or_die(db.path());
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->check_integrity().ok()) << store->check_integrity().to_string();
  auto events = store->events(id);
  ASSERT_TRUE(events.ok());
  ASSERT_GE(events->size(), size_t(1 + 3 * acked));
  EXPECT_EQ((events->size() - 1) % 3, 0u) << "a partial turn is in the log";
  for (int32_t t = 1; t <= acked; ++t) {
    auto r = store->recorded_tool_result(id, "s", 1, t - 1);
    ASSERT_TRUE(r.ok() && r->has_value()) << "acknowledged turn " << t << " is lost";
    EXPECT_EQ(*(*r)->payload.find("result"), Json(t));
  }
}

INSTANTIATE_TEST_SUITE_P(Sync, Durability,
                         ::testing::Values(StoreOptions::Sync::kNormal, StoreOptions::Sync::kFull),
                         [](const ::testing::TestParamInfo<StoreOptions::Sync>& info) {
                           return std::string(info.param == StoreOptions::Sync::kFull ? "Full" : "Normal");
                         });

}  // namespace
}  // namespace dloop::memory
