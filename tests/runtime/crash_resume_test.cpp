// The crash-resume test: `dloop run` is SIGKILLed right after its k-th committed transaction
// (DLOOP_TEST_KILL_AFTER_COMMITS=k), for every k from 1 until the run finishes unkilled, and then
// `dloop resume` finishes it. For each k: the resumed run completes with the same outputs as an
// uninterrupted run, the side-effecting tool ran exactly once per recorded completion (effects.log
// has one line per recorded tool_result, per item), and the database passes integrity checks.
#include <map>

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

}  // namespace
}  // namespace dloop::test
