// Run leases (issue 42): taken with the run in one transaction, refused to a second owner while
// live, free once expired, fenced (a commit by an owner that lost the lease writes nothing),
// released with the terminal event, and taken by exactly one of several processes racing for it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>

#include "test_util.h"

namespace dloop::memory {
namespace {

using testing_util::ev;
using testing_util::open_or_die;
using testing_util::TempDb;

// A clock the test moves by hand.
struct ManualClock {
  std::shared_ptr<std::atomic<int64_t>> now = std::make_shared<std::atomic<int64_t>>(1796212800000);
  StoreOptions options() const {
    StoreOptions o = testing_util::test_options();
    auto n = now;
    o.clock_ms = [n] { return n->load(); };
    return o;
  }
};

LeaseRequest req(const std::string& owner, int64_t ttl_ms = 30000) {
  LeaseRequest r;
  r.owner = owner;
  r.pid = owner == "a" ? 111 : 222;
  r.host = "host-" + owner;
  r.ttl_ms = ttl_ms;
  return r;
}

std::string new_run(Store& s, const std::optional<LeaseRequest>& lease) {
  NewRun nr;
  nr.workflow = "wf";
  auto id = s.create_run(nr, lease);
  EXPECT_TRUE(id.ok()) << id.status().to_string();
  return id.ok() ? *id : "";
}

TEST(Lease, CreateRunTakesTheLeaseAndASecondOwnerIsRefusedWhileLive) {
  TempDb db;
  ManualClock clock;
  auto s = open_or_die(db.path(), clock.options());
  const std::string id = new_run(*s, req("a"));
  auto held = s->get_lease(id);
  ASSERT_TRUE(held.ok() && held->has_value());
  EXPECT_EQ((*held)->owner, "a");
  EXPECT_EQ((*held)->pid, 111);
  EXPECT_EQ((*held)->host, "host-a");
  EXPECT_EQ((*held)->expires_ms, clock.now->load() + 30000);

  auto b = s->acquire_lease(id, req("b"));
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_FALSE(b->acquired);
  EXPECT_EQ(b->lease.owner, "a");  // the holder, for the refusal message
  EXPECT_EQ(b->lease.pid, 111);

  // The owner itself may take it again (a renewal by another name).
  auto a = s->acquire_lease(id, req("a"));
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->acquired);
}

TEST(Lease, AnExpiredLeaseIsTakenAndTheOldOwnerIsFencedOut) {
  TempDb db;
  ManualClock clock;
  auto s = open_or_die(db.path(), clock.options());
  const std::string id = new_run(*s, req("a", 1000));
  clock.now->fetch_add(999);
  EXPECT_FALSE(s->acquire_lease(id, req("b"))->acquired);
  EXPECT_TRUE(s->renew_lease(id, "a", 1000).ok());  // a beat moves the expiry
  clock.now->fetch_add(999);
  EXPECT_FALSE(s->acquire_lease(id, req("b"))->acquired);
  clock.now->fetch_add(2000);  // a crashed owner: no beats
  auto b = s->acquire_lease(id, req("b"));
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->acquired);
  const int64_t before = s->get_run(id)->last_seq;

  // The old owner wakes up: its commit, renewal and finish are refused and write nothing.
  Batch batch(id);
  batch.append(ev("step_started", "s1", 1)).lease("a");
  auto c = s->commit(batch);
  EXPECT_EQ(c.status().code(), base::Code::kCancelled) << c.status().to_string();
  EXPECT_NE(c.status().message().find("pid 222"), std::string::npos) << c.status().message();
  EXPECT_EQ(s->renew_lease(id, "a", 1000).code(), base::Code::kCancelled);
  EXPECT_EQ(s->finish_run(id, RunStatus::kFailed, base::Json(), "x", "a").status().code(), base::Code::kCancelled);
  EXPECT_EQ(s->get_run(id)->last_seq, before);
  EXPECT_EQ(s->get_run(id)->status, RunStatus::kRunning);

  // The new owner writes and finishes; finishing releases the lease.
  Batch mine(id);
  mine.append(ev("step_started", "s1", 1)).lease("b");
  EXPECT_TRUE(s->commit(mine).ok());
  EXPECT_TRUE(s->finish_run(id, RunStatus::kCompleted, base::Json::object(), "", "b").ok());
  EXPECT_FALSE(s->get_lease(id)->has_value());
  EXPECT_EQ(s->acquire_lease(id, req("c")).status().code(), base::Code::kInvalidArgument);  // completed
}

TEST(Lease, ReplaceOwnerTakesAnUnexpiredLeaseOnlyFromThatOwner) {
  TempDb db;
  ManualClock clock;
  auto s = open_or_die(db.path(), clock.options());
  const std::string id = new_run(*s, req("a"));
  LeaseRequest wrong = req("b");
  wrong.replace_owner = "someone-else";
  EXPECT_FALSE(s->acquire_lease(id, wrong)->acquired);
  LeaseRequest right = req("b");
  right.replace_owner = "a";
  EXPECT_TRUE(s->acquire_lease(id, right)->acquired);
  EXPECT_EQ((*s->get_lease(id))->owner, "b");
  EXPECT_TRUE(s->release_lease(id, "a").ok());  // not a's any more: a no-op
  EXPECT_TRUE(s->get_lease(id)->has_value());
  EXPECT_TRUE(s->release_lease(id, "b").ok());
  EXPECT_FALSE(s->get_lease(id)->has_value());
}

// Eight processes race for one free lease on the same file: exactly one gets it.
TEST(Lease, ExactlyOneOfManyProcessesTakesALease) {
  TempDb db;
  std::string id;
  {
    auto s = open_or_die(db.path());
    id = new_run(*s, std::nullopt);
  }
  constexpr int kProcs = 8;
  std::vector<pid_t> kids;
  for (int i = 0; i < kProcs; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      StoreOptions o;
      o.busy_timeout_ms = 20000;
      auto s = Store::open(db.path(), o);
      if (!s.ok()) ::_exit(3);
      LeaseRequest r;
      r.owner = "p" + std::to_string(i);
      r.pid = ::getpid();
      auto got = (*s)->acquire_lease(id, r);
      ::_exit(!got.ok() ? 3 : got->acquired ? 0 : 1);
    }
    kids.push_back(pid);
  }
  int winners = 0;
  for (pid_t k : kids) {
    int status = 0;
    ASSERT_EQ(::waitpid(k, &status, 0), k);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_NE(WEXITSTATUS(status), 3);
    if (WEXITSTATUS(status) == 0) ++winners;
  }
  EXPECT_EQ(winners, 1);
}

}  // namespace
}  // namespace dloop::memory
