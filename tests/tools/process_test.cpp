// run_process(): stdin/stdout/stderr plumbing without deadlocks, exit codes, signals, the
// deadline, the stdout cap, a missing program, cwd and env.
#include <signal.h>

#include "dloop/base/strings.h"
#include "dloop/tools/process.h"
#include "test_util.h"

namespace dloop::tools {
namespace {

using namespace testing;

// co_spawn needs a default-constructible result: wrap the Result in an optional.
asio::awaitable<std::optional<base::Result<ProcessResult>>> start(ProcessSpec spec) {
  auto op = run_process(std::move(spec));
  co_return co_await std::move(op);
}

base::Result<ProcessResult> run_raw(Harness& h, ProcessSpec spec) { return *h.run(start(std::move(spec))); }

ProcessResult run(Harness& h, ProcessSpec spec) {
  auto r = run_raw(h, std::move(spec));
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : ProcessResult{};
}

ProcessSpec sh(const std::string& script) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  return spec;
}

TEST(Process, StdinToStdoutBothLarge) {
  Harness h;
  ProcessSpec spec;
  spec.argv = {"cat"};
  spec.stdin_data = std::string(3 << 20, 'z');  // larger than any pipe buffer, both ways at once
  spec.max_stdout_bytes = 4 << 20;
  ProcessResult r = run(h, std::move(spec));
  EXPECT_EQ(r.end, ProcessResult::End::kExited);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_data.size(), size_t{3} << 20);
}

TEST(Process, ExitCodeStderrAndSignals) {
  Harness h;
  ProcessResult r = run(h, sh("echo out; echo err >&2; exit 3"));
  EXPECT_EQ(r.end, ProcessResult::End::kExited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.stdout_data, "out\n");
  EXPECT_EQ(r.stderr_data, "err\n");
  EXPECT_EQ(describe_end(r), "exited with status 3");
  EXPECT_EQ(stderr_excerpt(r), "; stderr: err");
  ProcessResult k = run(h, sh("kill -SEGV $$"));
  EXPECT_EQ(k.end, ProcessResult::End::kSignaled);
  EXPECT_EQ(k.term_signal, SIGSEGV);
  EXPECT_EQ(describe_end(k), "was killed by signal 11 (SIGSEGV)");
}

TEST(Process, DeadlineKillsTheWholeGroup) {
  Harness h;
  TempDir dir;
  ProcessSpec spec = sh("sleep 30 & echo $! > " + (dir / "child.pid").string() + "; wait");
  spec.deadline = Clock::now() + std::chrono::milliseconds(300);
  auto start = Clock::now();
  ProcessResult r = run(h, std::move(spec));
  EXPECT_EQ(r.end, ProcessResult::End::kTimedOut);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(contains(describe_end(r), "timed out after"));
  pid_t child = std::stoi(dir.read("child.pid"));
  // The grandchild (the background sleep) was in the group and is dead too (gone, or a zombie
  // waiting for init to reap it: it is not our child).
  auto alive = [&] {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string pid, comm, state;
    if (!(stat >> pid >> comm >> state)) return false;
    return state != "Z" && state != "X";
  };
  for (int i = 0; i < 100 && alive(); ++i) ::usleep(10'000);
  EXPECT_FALSE(alive());
}

TEST(Process, StdoutCap) {
  Harness h;
  ProcessSpec spec;
  spec.argv = {"yes"};
  spec.max_stdout_bytes = 100'000;
  spec.deadline = Clock::now() + std::chrono::seconds(20);
  ProcessResult r = run(h, std::move(spec));
  EXPECT_EQ(r.end, ProcessResult::End::kOutputTooLarge);
  EXPECT_EQ(r.stdout_data.size(), 100'000u);
}

TEST(Process, StderrKeepsTheTail) {
  Harness h;
  ProcessSpec spec = sh("i=0; while [ $i -lt 3000 ]; do echo line$i >&2; i=$((i+1)); done; echo done >&2");
  spec.max_stderr_bytes = 100;
  ProcessResult r = run(h, std::move(spec));
  EXPECT_EQ(r.end, ProcessResult::End::kExited);
  EXPECT_LE(r.stderr_data.size(), 100u);
  EXPECT_TRUE(r.stderr_truncated);
  EXPECT_TRUE(base::ends_with(r.stderr_data, "line2999\ndone\n")) << r.stderr_data;
  EXPECT_TRUE(contains(stderr_excerpt(r), "; stderr (last part): "));
}

TEST(Process, MissingProgramCwdAndEnv) {
  Harness h;
  ProcessSpec missing;
  missing.argv = {"definitely-not-a-program-xyz"};
  auto m = run_raw(h, std::move(missing));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), base::Code::kNotFound);
  EXPECT_TRUE(contains(m.status().message(), "cannot start 'definitely-not-a-program-xyz'"));

  TempDir dir;
  ProcessSpec spec = sh("pwd; echo \"$GREETING\"; echo \"${HOME-unset}\"");
  spec.cwd = dir.path();
  spec.env = std::vector<std::string>{"GREETING=hi", "PATH=/usr/bin:/bin"};
  ProcessResult r = run(h, std::move(spec));
  EXPECT_EQ(r.stdout_data, dir.path().string() + "\nhi\nunset\n");
  // A child that does not read its stdin does not hang the writer.
  ProcessSpec deaf = sh("exit 0");
  deaf.stdin_data = std::string(1 << 20, 'x');
  EXPECT_EQ(run(h, std::move(deaf)).end, ProcessResult::End::kExited);
}

TEST(Process, Utf8Sanitizing) {
  EXPECT_EQ(to_valid_utf8("ok\xff" "x\xc3"), "ok\xEF\xBF\xBDx\xEF\xBF\xBD");
  EXPECT_EQ(to_valid_utf8("caf\xc3\xa9"), "caf\xc3\xa9");
}

}  // namespace
}  // namespace dloop::tools
