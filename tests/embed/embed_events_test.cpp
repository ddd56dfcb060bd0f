// libdloop's RunOptions::on_event: the listener sees every event of a new run as the store holds
// it, from run_started (seq 1) to the terminal event, each with its `ts` filled in.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/dloop.h"

namespace {

namespace fs = std::filesystem;

TEST(EmbedEvents, OnEventSeesRunStartedAndTimestamps) {
  const fs::path dir = fs::path(testing::TempDir()) / ("dloop_embed_events_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "flow.yaml") << "name: add\ntools: [{use: calculator}]\nsteps:\n  - id: sum\n    tool: calculator\n"
                                      "    args: {expression: \"1 + 1\"}\noutputs: {r: \"${{ steps.sum.output.result }}\"}\n";
  dloop::RunOptions o;
  o.workflow_path = (dir / "flow.yaml").string();
  o.db_path = (dir / "s.db").string();
  o.workspace = dir.string();
  std::vector<dloop::Event> seen;
  o.on_event = [&seen](const dloop::Event& e) { seen.push_back(e); };
  dloop::RunResult r = dloop::run_workflow(o);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_GE(seen.size(), 3u);
  EXPECT_EQ(seen.front().type, "run_started");
  EXPECT_EQ(seen.back().type, "run_completed");
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].seq, static_cast<int64_t>(i + 1)) << seen[i].json;
    EXPECT_EQ(seen[i].run_id, r.run_id);
    auto j = dloop::base::Json::parse(seen[i].json);
    ASSERT_TRUE(j.ok()) << seen[i].json;
    ASSERT_NE(j->find("ts"), nullptr) << seen[i].json;
    EXPECT_FALSE(j->find("ts")->as_string().empty()) << seen[i].json;
  }
}

}  // namespace
