// The crash-resume test: `dloop run` is SIGKILLed right after its k-th committed transaction
// (DLOOP_TEST_KILL_AFTER_COMMITS=k), for every k from 1 until the run finishes unkilled, and then
// `dloop resume` finishes it. For each k: the resumed run completes with the same outputs as an
// uninterrupted run, the side-effecting tool ran exactly once per recorded completion (effects.log
// has one line per recorded tool_result, per item), and the database passes integrity checks.
// Also (issue 42): `dloop resume` of a run whose `dloop run` is still alive exits 1 naming that
// process, and the run's side effects happen once.
#include <unistd.h>

#include <chrono>
#include <map>
#include <thread>

#include "e2e_util.h"

namespace dloop::test {
namespace {

using base::Json;

std::filesystem::path setup(const std::string& name) {
  auto dir = fresh_dir(name);
  const std::string data = std::string(DLOOP_SOURCE_DIR) + "/tests/runtime/data/";
  std::filesystem::copy_file(data + "crash_flow.yaml", dir / "flow.yaml");
  std::filesystem::copy_file(data + "append.sh", dir / "append.sh");
  return dir;
}

std::string flags(const std::filesystem::path& dir) {
  return " --db " + (dir / "state.db").string() + " --workspace " + dir.string();
}

std::map<std::string, int> lines(const std::filesystem::path& file) {
  std::map<std::string, int> count;
  std::istringstream in(slurp(file.string()));
  std::string line;
  while (std::getline(in, line)) count[line]++;
  return count;
}

std::map<std::string, int> recorded_completions(memory::Store& store, const std::string& run_id) {
  std::map<std::string, int> count;
  auto events = store.events(run_id);
  EXPECT_TRUE(events.ok());
  for (const auto& e : *events) {
    if (e.type != "tool_result") continue;
    const Json* r = e.payload.find("result");
    if (r && r->find("item")) count[r->find("item")->as_string()]++;
  }
  return count;
}

TEST(CrashResume, EveryCommitPoint) {
  auto ref_dir = setup("ref");
  Outcome ref = run_dloop("run " + (ref_dir / "flow.yaml").string() + flags(ref_dir));
  ASSERT_EQ(ref.code, 0) << ref.err;
  auto reference = Json::parse(ref.out);
  ASSERT_TRUE(reference.ok());
  EXPECT_EQ(reference->find("summary")->find("last")->as_string(), "last");
  const std::map<std::string, int> once = {{"first", 1}, {"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}, {"last", 1}};
  EXPECT_EQ(lines(ref_dir / "effects.log"), once);

  int killed = 0;
  for (int k = 1; k < 200; ++k) {
    std::string trace = "killed after commit ";
    trace += std::to_string(k);
    SCOPED_TRACE(trace);
    auto dir = setup(std::string("k").append(std::to_string(k)));
    Outcome first = run_dloop("run " + (dir / "flow.yaml").string() + flags(dir),
                              "DLOOP_TEST_KILL_AFTER_COMMITS=" + std::to_string(k) + " ");
    if (first.code == 0) break;  // k is past the last commit: the run finished
    ++killed;
    const std::string run_id = run_id_from(first.err);
    ASSERT_FALSE(run_id.empty()) << first.err;
    {
      auto store = open_db(dir / "state.db");
      auto run = store->get_run(run_id);
      ASSERT_TRUE(run.ok());
      EXPECT_EQ(run->status, memory::RunStatus::kRunning);
      EXPECT_EQ(lines(dir / "effects.log"), recorded_completions(*store, run_id));
    }
    Outcome resumed = run_dloop("resume " + run_id + flags(dir));
    ASSERT_EQ(resumed.code, 0) << resumed.err;
    auto out = Json::parse(resumed.out);
    ASSERT_TRUE(out.ok()) << resumed.out;
    EXPECT_EQ(*out, *reference);
    auto store = open_db(dir / "state.db");
    EXPECT_EQ(lines(dir / "effects.log"), once);
    EXPECT_EQ(recorded_completions(*store, run_id), once);
    EXPECT_TRUE(store->check_integrity().ok());
    auto run = store->get_run(run_id);
    ASSERT_TRUE(run.ok());
    EXPECT_EQ(run->status, memory::RunStatus::kCompleted);
    std::filesystem::remove_all(dir);
  }
  EXPECT_GE(killed, 10) << "the workflow should have many commit points";
}

TEST(CrashResume, ResumeWhileTheRunIsAliveIsRefused) {
  auto dir = fresh_dir("alive");
  const std::string data = std::string(DLOOP_SOURCE_DIR) + "/tests/runtime/data/";
  std::filesystem::copy_file(data + "append.sh", dir / "append.sh");
  {
    std::ofstream flow(dir / "flow.yaml");
    flow << "name: alive\n"
            "tools:\n"
            "  - name: append\n"
            "    command: [./append.sh]\n"
            "    parameters: {type: object, properties: {item: {type: string}}, required: [item]}\n"
            "  - name: nap\n"
            "    command: [sh, -c, \"sleep 3; echo '{}'\"]\n"
            "    parameters: {type: object}\n"
            "steps:\n"
            "  - {id: one, tool: append, args: {item: one}}\n"
            "  - {id: nap, tool: nap}\n"
            "  - {id: two, tool: append, args: {item: two}}\n";
  }
  const std::string cmd = std::string(DLOOP_BINARY) + " run " + (dir / "flow.yaml").string() + flags(dir) +
                          " >" + (dir / "run.out").string() + " 2>" + (dir / "run.err").string();
  pid_t original = ::fork();
  ASSERT_GE(original, 0);
  if (original == 0) {
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::string run_id;
  for (int i = 0; i < 200 && run_id.empty(); ++i) {  // wait for the run to start its nap
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    run_id = run_id_from(slurp((dir / "run.err").string()));
    if (!run_id.empty() && lines(dir / "effects.log").count("one") == 0) run_id.clear();
  }
  ASSERT_FALSE(run_id.empty());
  Outcome second = run_dloop("resume " + run_id + flags(dir));
  EXPECT_EQ(second.code, 1) << second.err;
  EXPECT_NE(second.err.find("is being executed by pid"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("lease expires"), std::string::npos) << second.err;
  int status = 0;
  ASSERT_EQ(::waitpid(original, &status, 0), original);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp((dir / "run.err").string());
  EXPECT_EQ(lines(dir / "effects.log"), (std::map<std::string, int>{{"one", 1}, {"two", 1}}));
  auto store = open_db(dir / "state.db");
  EXPECT_EQ(store->get_run(run_id)->status, memory::RunStatus::kCompleted);
  auto events = store->events(run_id);
  int resumed = 0;
  for (const auto& e : *events) resumed += e.type == "run_resumed" ? 1 : 0;
  EXPECT_EQ(resumed, 0);
}

}  // namespace
}  // namespace dloop::test
