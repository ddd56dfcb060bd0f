// `dloop run` with an `mcp:` tool entry: the fake server's tools are registered under a prefix,
// tool steps call them, a crash is a step failure the run survives (continue_on_error) and the
// next call restarts the server; the server's stderr is recorded as an mcp_log event.
#include <gtest/gtest.h>

#include "../common/run_command.h"
#include "../tools/test_util.h"

namespace dloop::tools::testing {
namespace {

TEST(McpRun, WorkflowToolStepsCallAnMcpServer) {
  TempDir dir;
  dir.write("flow.yaml", std::string(R"(name: mcp-fake
tools:
  - mcp: {command: )") + FAKE_MCP_SERVER + R"(, args: [--starts, starts.txt], cwd: ., timeout: 5s}
    prefix: f_
    exclude: [hang]
steps:
  - id: first
    tool: f_echo
    args: {message: hello}
  - id: boom
    tool: f_crash
    continue_on_error: true
  - id: second
    tool: f_add
    args: {a: 1, b: 2}
outputs:
  first: ${{ steps.first.output.structured.echo }}
  boom: ${{ steps.boom.status }}
  boom_error: ${{ steps.boom.error.message }}
  second: ${{ steps.second.output.text }}
)");
  const std::string db = (dir / "state.db").string();
  auto o = test::run_command(std::string(DLOOP_BINARY) + " run " + (dir / "flow.yaml").string() + " --db " + db +
                             " --json-events");
  ASSERT_EQ(o.code, 0) << o.err;
  auto out = Json::parse(o.out);
  ASSERT_TRUE(out.ok()) << o.out;
  EXPECT_EQ(out->find("first")->as_string(), "hello");
  EXPECT_EQ(out->find("boom")->as_string(), "failed");
  EXPECT_TRUE(contains(out->find("boom_error")->as_string(), "exited with status 3")) << out->dump();
  EXPECT_EQ(out->find("second")->as_string(), "sum 3");
  EXPECT_EQ(dir.read("starts.txt"), "start\nstart\n");  // cwd: . is the workflow's folder
  EXPECT_TRUE(contains(o.err, R"("type":"mcp_log")")) << o.err;
  EXPECT_TRUE(contains(o.err, "crashing on purpose")) << o.err;
}

TEST(McpRun, AServerThatCannotStartFailsTheRunWithItsReason) {
  TempDir dir;
  dir.write("flow.yaml", std::string("name: mcp-dead\ntools:\n  - mcp: {command: ") + FAKE_MCP_SERVER +
                             ", args: [--die-at-start]}\nsteps:\n  - id: a\n    set: {x: 1}\n");
  auto o = test::run_command(std::string(DLOOP_BINARY) + " run " + (dir / "flow.yaml").string() + " --db " +
                             (dir / "state.db").string());
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_TRUE(contains(o.err, "tool at line 3")) << o.err;
  EXPECT_TRUE(contains(o.err, "refusing to start")) << o.err;
}

}  // namespace
}  // namespace dloop::tools::testing
