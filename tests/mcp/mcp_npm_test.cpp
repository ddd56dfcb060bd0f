// Real MCP servers and a real client library from the npm registry (installed by the test into
// <build>/npm-cache): @modelcontextprotocol/server-everything (echo and get-sum only; never its
// URL-fetching tool), @modelcontextprotocol/server-filesystem confined to a temporary folder
// through `dloop run`, and the official @modelcontextprotocol/sdk client driving `dloop mcp serve`.
#include <gtest/gtest.h>

#include "../tools/test_util.h"
#include "dloop/tools/mcp_client.h"
#include "npm_util.h"
#include "serve_flows.h"

namespace dloop::tools::testing {
namespace {

class McpNpm : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = test::ensure_npm_packages();
    ASSERT_EQ(why, "");
  }
};

TEST_F(McpNpm, EverythingServerEchoAndSum) {
  Harness h;
  McpServerConfig cfg;
  cfg.label = "server-everything";
  cfg.argv = {test::npm_bin("mcp-server-everything")};
  cfg.include = {"echo", "get-sum"};
  cfg.timeout = std::chrono::seconds(60);
  auto client = McpClient::create(h.io().get_executor(), cfg);
  auto tools = await_in(h, make_mcp_tools(client));
  ASSERT_TRUE(tools.ok()) << tools.status().to_string();
  EXPECT_EQ(client->protocol_version(), "2025-11-25");  // it answers server/discover with "method not found"
  Registry reg;
  for (auto& t : *tools) ASSERT_TRUE(reg.add(t).ok());
  EXPECT_EQ(reg.names(), (std::vector<std::string>{"echo", "get-sum"}));
  ToolResult echo = h.run(reg.invoke("echo", J(R"({"message": "hello from dloop"})"), h.ctx()));
  ASSERT_TRUE(echo.ok()) << echo.error().message;
  EXPECT_EQ(echo.value().find("text")->as_string(), "Echo: hello from dloop");
  ToolResult sum = h.run(reg.invoke("get-sum", J(R"({"a": 19, "b": 23})"), h.ctx()));
  ASSERT_TRUE(sum.ok()) << sum.error().message;
  EXPECT_TRUE(contains(sum.value().find("text")->as_string(), "42")) << sum.value().dump();
  // Its own schema (from the listing) is enforced before the call.
  EXPECT_TOOL_ERROR(h.run(reg.invoke("get-sum", J(R"({"a": "x", "b": 1})"), h.ctx())), ToolErrorKind::kInvalidArguments,
                    "#/a");
  h.run([client]() -> asio::awaitable<int> {
    auto s = client->shutdown();
    co_await std::move(s);
    co_return 0;
  }());
  EXPECT_FALSE(client->running());
}

TEST_F(McpNpm, FilesystemServerInAWorkflowStaysInItsFolder) {
  TempDir dir;
  dir.write("allowed/hello.txt", "hello from a file\n");
  const std::string allowed = (dir / "allowed").string();
  dir.write("flow.yaml", "name: fs-flow\ntools:\n  - mcp: {command: " + test::npm_bin("mcp-server-filesystem") +
                             ", args: [" + allowed + "], timeout: 60s}\n    prefix: fs_\n"
                             "    include: [read_text_file, write_file]\nsteps:\n"
                             "  - id: write\n    tool: fs_write_file\n    args: {path: " + allowed +
                             "/out.txt, content: written by dloop}\n"
                             "  - id: read\n    tool: fs_read_text_file\n    args: {path: " + allowed + "/hello.txt}\n"
                             "  - id: escape\n    tool: fs_read_text_file\n    args: {path: " + (dir / "flow.yaml").string() +
                             "}\n    continue_on_error: true\n"
                             "outputs:\n  read: ${{ steps.read.output.text }}\n  escape: ${{ steps.escape.status }}\n"
                             "  escape_error: ${{ steps.escape.error.message }}\n");
  auto o = test::run_command(std::string(DLOOP_BINARY) + " run " + (dir / "flow.yaml").string() + " --db " +
                             (dir / "state.db").string());
  ASSERT_EQ(o.code, 0) << o.err;
  auto out = Json::parse(o.out);
  ASSERT_TRUE(out.ok()) << o.out;
  EXPECT_EQ(out->find("read")->as_string(), "hello from a file\n");
  EXPECT_EQ(out->find("escape")->as_string(), "failed");
  EXPECT_TRUE(contains(out->find("escape_error")->as_string(), "Access denied")) << out->dump();
  EXPECT_EQ(dir.read("allowed/out.txt"), "written by dloop");
}

TEST_F(McpNpm, OfficialSdkClientDrivesDloopMcpServe) {
  TempDir dir;
  write_serve_flows(dir);
  const std::string script = test::npm_dir() + "/sdk_client_" + std::to_string(::getpid()) + ".mjs";
  std::ofstream(script) << R"(import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const [dloop, flows, db] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: dloop, args: ["mcp", "serve", "--workflows", flows, "--db", db] });
const client = new Client({ name: "sdk-test", version: "1.0.0" });
await client.connect(transport);
const listed = await client.listTools();
const sum = await client.callTool({ name: "add-numbers", arguments: { a: 1.5, b: 2 } });
const bad = await client.callTool({ name: "add-numbers", arguments: { a: "x" } });
console.log(JSON.stringify({ server: client.getServerVersion(), tools: listed.tools, sum, bad }));
await client.close();
)";
  auto o = test::run_command("node " + script + " " + DLOOP_BINARY + " " + (dir / "flows").string() + " " +
                             (dir / "state.db").string());
  std::remove(script.c_str());
  ASSERT_EQ(o.code, 0) << o.err << o.out;
  auto out = Json::parse(o.out);
  ASSERT_TRUE(out.ok()) << o.out;
  EXPECT_EQ(out->find("server")->find("name")->as_string(), "dloop");
  ASSERT_EQ(out->find("tools")->size(), 2u);
  EXPECT_EQ(out->find("tools")->as_array()[0].find("name")->as_string(), "add-numbers");
  EXPECT_EQ(*out->find("sum")->find("structuredContent"), J(R"({"sum": 3.5, "label": "sum of 1.5 and 2"})"));
  EXPECT_EQ(*out->find("bad")->find("isError"), Json(true));
  EXPECT_TRUE(contains(out->find("bad")->find("content")->as_array()[0].find("text")->as_string(), "invalid arguments"));
}

}  // namespace
}  // namespace dloop::tools::testing
