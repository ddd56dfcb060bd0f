// `dloop mcp serve` driven by dloop's own MCP client: workflows become tools with typed input
// schemas, a call runs the workflow in the state database and returns its outputs as
// structuredContent, bad arguments are a tool error, and bad workflow folders exit 2.
#include <gtest/gtest.h>

#include "../common/run_command.h"
#include "../tools/test_util.h"
#include "dloop/tools/mcp_client.h"
#include "serve_flows.h"

namespace dloop::tools::testing {
namespace {

TEST(McpServe, OurClientListsAndCallsWorkflows) {
  TempDir dir;
  write_serve_flows(dir);
  Harness h;
  McpServerConfig cfg;
  cfg.label = "dloop mcp serve";
  cfg.argv = {DLOOP_BINARY, "mcp", "serve", "--workflows", (dir / "flows").string(), "--db", (dir / "state.db").string()};
  cfg.timeout = std::chrono::seconds(60);
  auto client = McpClient::create(h.io().get_executor(), cfg);
  auto tools = await_in(h, make_mcp_tools(client));
  ASSERT_TRUE(tools.ok()) << tools.status().to_string();
  EXPECT_EQ(client->protocol_version(), kMcpModernVersion);  // dloop answers server/discover
  ASSERT_EQ(tools->size(), 2u);
  EXPECT_EQ((*tools)[0]->name(), "add-numbers");
  EXPECT_EQ((*tools)[0]->description(), "Adds two numbers with the calculator.");
  EXPECT_EQ((*tools)[0]->parameters().json(),
            J(R"({"type": "object", "properties": {"a": {"type": "number", "description": "first addend"},
                  "b": {"type": "number", "default": 2}}, "required": ["a"], "additionalProperties": false})"));
  Registry reg;
  for (auto& t : *tools) ASSERT_TRUE(reg.add(t).ok());

  ToolResult sum = h.run(reg.invoke("add-numbers", J(R"({"a": 40})"), h.ctx()));
  ASSERT_TRUE(sum.ok()) << sum.error().message;
  EXPECT_EQ(*sum.value().find("structured"), J(R"({"sum": 42, "label": "sum of 40 and 2"})"));
  EXPECT_EQ(sum.value().find("text")->as_string(), R"({"sum":42,"label":"sum of 40 and 2"})");

  ToolResult shout = h.run(reg.invoke("shout", J(R"({"word": "hey"})"), h.ctx()));
  ASSERT_TRUE(shout.ok()) << shout.error().message;
  EXPECT_EQ(*shout.value().find("structured"), J(R"({"loud": "HEY!"})"));

  // Arguments the workflow rejects are an isError result: a tool error the model sees.
  Registry loose;
  ASSERT_TRUE(loose.add(std::make_shared<McpLooseTool>(client, "add-numbers")).ok());
  EXPECT_TOOL_ERROR(h.run(loose.invoke("add-numbers", J(R"({"a": "forty"})"), h.ctx())), ToolErrorKind::kFailed,
                    "invalid arguments");
  h.run([client]() -> asio::awaitable<int> {
    auto s = client->shutdown();
    co_await std::move(s);
    co_return 0;
  }());
  EXPECT_FALSE(client->running());

  // The calls are runs in the state database, like `dloop run`.
  auto runs = test::run_command(std::string(DLOOP_BINARY) + " runs list --json --db " + (dir / "state.db").string());
  ASSERT_EQ(runs.code, 0) << runs.err;
  auto listed = Json::parse(runs.out);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->find("runs")->size(), 2u);
  for (const auto& r : listed->find("runs")->as_array()) EXPECT_EQ(r.find("status")->as_string(), "completed");
}

TEST(McpServe, HandshakeEraAndProtocolErrorsOverRawStdio) {
  TempDir dir;
  write_serve_flows(dir);
  dir.write("in.txt",
            R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
not json
{"jsonrpc":"2.0","id":2,"method":"resources/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"shout","arguments":{"word":"ok"}}}
)");
  auto o = test::run_command(std::string(DLOOP_BINARY) + " mcp serve --workflows " + (dir / "flows").string() +
                             " --db " + (dir / "state.db").string() + " < " + (dir / "in.txt").string());
  ASSERT_EQ(o.code, 0) << o.err;
  std::vector<Json> lines;
  size_t pos = 0;
  while (pos < o.out.size()) {
    size_t nl = o.out.find('\n', pos);
    auto j = Json::parse(o.out.substr(pos, nl - pos));
    ASSERT_TRUE(j.ok()) << o.out;
    lines.push_back(*j);
    pos = nl + 1;
  }
  ASSERT_EQ(lines.size(), 5u) << o.out;
  EXPECT_EQ(lines[0].find("result")->find("protocolVersion")->as_string(), "2025-06-18");
  EXPECT_EQ(lines[1].find("error")->find("code")->as_int(), -32700);
  EXPECT_EQ(lines[2].find("error")->find("code")->as_int(), -32601);
  EXPECT_EQ(lines[3].find("error")->find("code")->as_int(), -32602);
  EXPECT_EQ(*lines[4].find("result")->find("structuredContent"), J(R"({"loud": "OK!"})"));

  dir.write("bad/broken.yaml", "name: broken\nsteps: 3\n");
  auto bad = test::run_command(std::string(DLOOP_BINARY) + " mcp serve --workflows " + (dir / "bad").string() +
                               " < /dev/null");
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(contains(bad.err, "broken.yaml:2")) << bad.err;
  auto none = test::run_command(std::string(DLOOP_BINARY) + " mcp serve < /dev/null");
  EXPECT_EQ(none.code, 2);
  EXPECT_TRUE(contains(none.err, "--workflows DIR is required")) << none.err;
}

}  // namespace
}  // namespace dloop::tools::testing
