// In process, issue 42: run leases and a busy store as the executor sees them.
// - A resume is refused while another live process holds the run's lease (nothing is written, the
//   message names the holder's pid, host and expiry), goes ahead once the lease expired (a crashed
//   server's run) or when its holder is a process of this host that is gone, and with force_lease
//   takes over a lease held from another host.
// - The heartbeat keeps a lease alive through a step longer than its ttl.
// - A write lock held by "another process" (the fault VFS) longer than busy_timeout is retried
//   with backoff: the run completes with no step_failed. Held past the retry budget, the run is
//   left running and resumable with no step_failed or run_failed, and resume then completes it.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "dloop/memory/fault_vfs.h"
#include "dloop/runtime/driver.h"
#include "dloop/workflows/load.h"
#include "e2e_util.h"

namespace dloop::test {
namespace {

using base::Json;

std::shared_ptr<const workflows::Workflow> load(const std::string& yaml) {
  auto wf = workflows::load_string(yaml, "test.yaml");
  EXPECT_TRUE(wf.ok()) << wf.status().to_string();
  return std::make_shared<const workflows::Workflow>(std::move(wf).value());
}

const char* kSetFlow = R"(
name: busy
steps:
  - {id: a, set: {v: 1}}
  - {id: b, set: {v: 2}}
  - {id: c, set: {v: 3}}
  - {id: d, set: {v: 4}}
outputs: {sum: "${{ steps.a.output.v }}-${{ steps.b.output.v }}-${{ steps.c.output.v }}-${{ steps.d.output.v }}"}
)";

runtime::RunRequest request(const std::filesystem::path& dir, std::shared_ptr<const workflows::Workflow> wf) {
  runtime::RunRequest r;
  r.workflow = std::move(wf);
  r.workflow_path = (dir / "flow.yaml").string();
  r.workflow_hash = "sha256:test";
  r.workspace = dir;
  return r;
}

runtime::RunOutcome run_one(runtime::RunRequest r, runtime::DriverOptions opts) {
  std::vector<runtime::RunRequest> reqs;
  reqs.push_back(std::move(r));
  auto result = runtime::run_workflows(std::move(reqs), opts);
  EXPECT_EQ(result.runs.size(), 1u);
  return result.runs.empty() ? runtime::RunOutcome{} : result.runs[0];
}

int count(const std::vector<memory::Event>& events, std::string_view type) {
  int n = 0;
  for (const auto& e : events) n += e.type == type ? 1 : 0;
  return n;
}

std::string this_host() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

// The owner id a dloop process `pid` of this host and PID namespace writes (run_lease.cpp).
std::string local_owner(int64_t pid) {
  char ns[128] = {};
  ssize_t n = ::readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
  return this_host() + ":" + std::string(ns, n > 0 ? static_cast<size_t>(n) : 0) + ":" + std::to_string(pid) +
         ":0123456789abcdef:1";
}

// A run created as another process would, holding a lease for `pid` on `host`.
std::string foreign_run(memory::Store& store, int64_t pid, int64_t ttl_ms, std::string host = this_host()) {
  memory::NewRun nr;
  nr.workflow = "busy";
  nr.workflow_path = "flow.yaml";
  nr.workflow_hash = "sha256:test";
  memory::LeaseRequest l;
  l.owner = host == this_host() ? local_owner(pid) : "far-away-process";
  l.pid = pid;
  l.host = host;
  l.ttl_ms = ttl_ms;
  auto id = store.create_run(nr, l);
  EXPECT_TRUE(id.ok()) << id.status().to_string();
  return id.ok() ? *id : "";
}

TEST(RunLease, ResumeIsRefusedWhileTheHolderIsAliveAndAllowedAfterExpiry) {
  auto dir = fresh_dir("lease_live");
  std::shared_ptr<memory::Store> store = open_db(dir / "state.db");
  ASSERT_NE(store, nullptr);
  const std::string id = foreign_run(*store, ::getpid(), 60000);  // we are alive: a live holder
  runtime::DriverOptions opts;
  opts.store = store;
  runtime::RunRequest r = request(dir, load(kSetFlow));
  r.resume_run_id = id;
  r.force_lease = true;  // never displaces a live holder
  runtime::RunOutcome refused = run_one(r, opts);
  EXPECT_TRUE(refused.left_resumable);
  EXPECT_FALSE(refused.status.ok());
  const std::string& msg = refused.status.message();
  EXPECT_NE(msg.find("pid " + std::to_string(::getpid()) + " on " + this_host()), std::string::npos) << msg;
  EXPECT_NE(msg.find("lease expires"), std::string::npos) << msg;
  EXPECT_EQ(store->get_run(id)->last_seq, 1);  // not even run_resumed
  EXPECT_EQ((*store->get_lease(id))->owner, local_owner(::getpid()));

  // The same run whose holder stopped beating (a crashed server): resumable once expired.
  const std::string stale = foreign_run(*store, ::getpid(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  runtime::RunRequest again = request(dir, load(kSetFlow));
  again.resume_run_id = stale;
  runtime::RunOutcome done = run_one(again, opts);
  ASSERT_TRUE(done.status.ok()) << done.status.to_string();
  EXPECT_EQ(done.outputs.find("sum")->dump(), "\"1-2-3-4\"");
  EXPECT_FALSE(store->get_lease(stale)->has_value());  // released with run_completed
}

TEST(RunLease, TheLeaseOfAProcessThatIsGoneIsTakenOver) {
  auto dir = fresh_dir("lease_gone");
  std::shared_ptr<memory::Store> store = open_db(dir / "state.db");
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);  // reaped: no such process any more (a SIGKILLed dloop)
  const std::string id = foreign_run(*store, dead, 60000);
  runtime::DriverOptions opts;
  opts.store = store;
  runtime::RunRequest r = request(dir, load(kSetFlow));
  r.resume_run_id = id;
  runtime::RunOutcome done = run_one(r, opts);
  ASSERT_TRUE(done.status.ok()) << done.status.to_string();
  EXPECT_EQ(store->get_run(id)->status, memory::RunStatus::kCompleted);
}

TEST(RunLease, ForceTakesOverALeaseFromAnotherHost) {
  auto dir = fresh_dir("lease_force");
  std::shared_ptr<memory::Store> store = open_db(dir / "state.db");
  const std::string id = foreign_run(*store, 4242, 60000, "some-other-host");
  runtime::DriverOptions opts;
  opts.store = store;
  runtime::RunRequest r = request(dir, load(kSetFlow));
  r.resume_run_id = id;
  runtime::RunOutcome refused = run_one(r, opts);
  EXPECT_TRUE(refused.left_resumable);
  EXPECT_NE(refused.status.message().find("pid 4242 on some-other-host"), std::string::npos)
      << refused.status.message();
  EXPECT_NE(refused.status.message().find("--force"), std::string::npos) << refused.status.message();
  EXPECT_EQ(store->get_run(id)->last_seq, 1);
  r.force_lease = true;
  runtime::RunOutcome done = run_one(r, opts);
  ASSERT_TRUE(done.status.ok()) << done.status.to_string();
  EXPECT_EQ(store->get_run(id)->status, memory::RunStatus::kCompleted);
}

TEST(RunLease, TheHeartbeatKeepsTheLeaseThroughALongStep) {
  auto dir = fresh_dir("lease_beat");
  std::shared_ptr<memory::Store> store = open_db(dir / "state.db");
  auto wf = load(R"(
name: slow
tools:
  - name: nap
    command: [sh, -c, "sleep 1; echo '{}'"]
    parameters: {type: object}
steps:
  - {id: nap, tool: nap}
)");
  runtime::DriverOptions opts;
  opts.store = store;
  opts.lease_ttl_ms = 300;  // expires three times over during the step unless renewed
  std::atomic<bool> refused_meanwhile{false};
  std::thread rival([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    auto runs = store->list_runs();
    if (!runs.ok() || runs->empty()) return;
    memory::LeaseRequest l;
    l.owner = "rival";
    auto got = store->acquire_lease((*runs)[0].id, l);
    refused_meanwhile = got.ok() && !got->acquired;
  });
  runtime::RunOutcome done = run_one(request(dir, wf), opts);
  rival.join();
  ASSERT_TRUE(done.status.ok()) << done.status.to_string();
  EXPECT_TRUE(refused_meanwhile);
}

std::shared_ptr<memory::Store> open_faulty(const std::filesystem::path& path) {
  memory::StoreOptions o;
  o.vfs = memory::fault_vfs::name();
  o.busy_timeout_ms = 50;
  o.sync = memory::StoreOptions::Sync::kNormal;
  auto s = memory::Store::open(path.string(), o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::shared_ptr<memory::Store>(std::move(s).value()) : nullptr;
}

TEST(BusyStore, ALockHeldPastBusyTimeoutIsRetriedNotAStepFailure) {
  auto dir = fresh_dir("busy_retry");
  auto store = open_faulty(dir / "state.db");
  ASSERT_NE(store, nullptr);
  runtime::DriverOptions opts;
  opts.store = store;
  opts.store_retry.budget_ms = 10000;
  memory::fault_vfs::hold_write_lock(4, 600);  // 12x busy_timeout, mid-run
  runtime::RunOutcome done = run_one(request(dir, load(kSetFlow)), opts);
  const int64_t refusals = memory::fault_vfs::busy_refusals();
  memory::fault_vfs::disarm();
  ASSERT_TRUE(done.status.ok()) << done.status.to_string();
  EXPECT_GT(refusals, 0);  // the lock really was in the way
  EXPECT_EQ(done.outputs.find("sum")->dump(), "\"1-2-3-4\"");
  auto events = store->events(done.run_id);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(count(*events, "step_failed"), 0);
  EXPECT_EQ(count(*events, "step_completed"), 4);
  EXPECT_EQ(store->get_run(done.run_id)->status, memory::RunStatus::kCompleted);
}

TEST(BusyStore, GivingUpLeavesTheRunResumable) {
  auto dir = fresh_dir("busy_give_up");
  auto store = open_faulty(dir / "state.db");
  ASSERT_NE(store, nullptr);
  runtime::DriverOptions opts;
  opts.store = store;
  opts.store_retry.budget_ms = 300;
  opts.lease_ttl_ms = 200;  // the lease cannot be handed back while the lock is held: let it expire
  memory::fault_vfs::hold_write_lock(4, 5000);
  runtime::RunOutcome gave_up = run_one(request(dir, load(kSetFlow)), opts);
  memory::fault_vfs::disarm();
  EXPECT_TRUE(gave_up.left_resumable);
  EXPECT_EQ(gave_up.status.code(), base::Code::kUnavailable) << gave_up.status.to_string();
  EXPECT_NE(gave_up.status.message().find("left resumable"), std::string::npos) << gave_up.status.message();
  ASSERT_FALSE(gave_up.run_id.empty());
  auto run = store->get_run(gave_up.run_id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status, memory::RunStatus::kRunning);
  auto events = store->events(gave_up.run_id);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(count(*events, "step_failed"), 0);
  EXPECT_EQ(count(*events, "run_failed"), 0);

  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  runtime::RunRequest again = request(dir, load(kSetFlow));
  again.resume_run_id = gave_up.run_id;
  runtime::RunOutcome done = run_one(again, opts);
  ASSERT_TRUE(done.status.ok()) << done.status.to_string();
  EXPECT_EQ(done.outputs.find("sum")->dump(), "\"1-2-3-4\"");
  events = store->events(gave_up.run_id);
  EXPECT_EQ(count(*events, "step_completed"), 4);
  EXPECT_TRUE(store->check_integrity().ok());
}

}  // namespace
}  // namespace dloop::test
