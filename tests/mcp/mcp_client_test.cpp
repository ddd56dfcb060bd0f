// The MCP client against the fake server (fake_mcp_server.cpp): the handshake in both protocol
// eras, paginated tools/list, include/exclude/prefix, results and isError, and every failure
// (crash, hang, garbage, oversized line, JSON-RPC error, bad version, death at start) as a clear
// tool error after which the next call works on a restarted server.
#include <gtest/gtest.h>

#include "../tools/test_util.h"
#include "dloop/tools/mcp_client.h"
#include "serve_flows.h"

namespace dloop::tools::testing {
namespace {

using namespace std::chrono_literals;

McpServerConfig fake(std::vector<std::string> flags = {}) {
  McpServerConfig c;
  c.label = "fake";
  c.argv = {FAKE_MCP_SERVER};
  for (auto& f : flags) c.argv.push_back(std::move(f));
  c.timeout = 2s;
  c.max_message_bytes = 64 * 1024;
  return c;
}

struct Fixture {
  Harness h;
  std::vector<std::string> log_lines;
  std::shared_ptr<McpClient> client;
  Registry registry;

  explicit Fixture(McpServerConfig cfg) {
    client = McpClient::create(h.io().get_executor(), std::move(cfg),
                               [this](base::LogLevel, std::string_view, std::string_view m) { log_lines.emplace_back(m); });
  }
  ~Fixture() { shutdown(); }

  void shutdown() {
    auto c = client;
    h.run([c]() -> asio::awaitable<int> {
      auto s = c->shutdown();
      co_await std::move(s);
      co_return 0;
    }());
  }

  base::Status load() {
    auto tools = await_in(h, make_mcp_tools(client));
    if (!tools.ok()) return tools.status();
    for (auto& t : *tools) DLOOP_RETURN_IF_ERROR(registry.add(t));
    return base::Status();
  }
  ToolResult call(const std::string& name, std::string_view args, ToolContext ctx) {
    return h.run(registry.invoke(name, J(args), std::move(ctx)));
  }
  ToolResult call(const std::string& name, std::string_view args = "{}") { return call(name, args, h.ctx()); }
  bool logged(std::string_view text) const {
    for (const auto& l : log_lines) {
      if (contains(l, text)) return true;
    }
    return false;
  }
};

TEST(McpClient, HandshakeListsEveryPageAndCallsTools) {
  Fixture f(fake());
  auto tools = f.h.run(f.client->start());
  ASSERT_TRUE(tools.ok()) << tools.to_string();
  EXPECT_EQ(f.client->protocol_version(), "2025-11-25");
  EXPECT_EQ(f.client->server_info().find("name")->as_string(), "fake");
  auto listed = await_in(f.h, f.client->list_tools());
  ASSERT_TRUE(listed.ok()) << listed.status().to_string();
  ASSERT_EQ(listed->size(), 10u);  // four pages of three
  EXPECT_EQ((*listed)[0].name, "echo");
  EXPECT_EQ((*listed)[9].name, "odd.name/x");

  ASSERT_TRUE(f.load().ok());
  EXPECT_EQ(f.registry.size(), 10u);
  EXPECT_NE(f.registry.find("odd_name_x"), nullptr);  // characters outside [A-Za-z0-9_-] become '_'
  ToolResult echo = f.call("echo", R"({"message": "hi"})");
  ASSERT_TRUE(echo.ok()) << echo.error().message;
  EXPECT_EQ(echo.value(), J(R"({"text": "Echo: hi", "structured": {"echo": "hi"}})"));
  ToolResult sum = f.call("add", R"({"a": 2, "b": 40})");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum.value().find("text")->as_string(), "sum 42");
  // The listed schema is enforced before the server sees the call ($schema and format dropped).
  EXPECT_TOOL_ERROR(f.call("echo", R"({"message": 3})"), ToolErrorKind::kInvalidArguments, "#/message");
  EXPECT_TOOL_ERROR(f.call("is_error"), ToolErrorKind::kFailed, "the tool failed on purpose");
  EXPECT_EQ(f.client->starts(), 1);
}

TEST(McpClient, StatelessProtocolWhenServerDiscoverAnswers) {
  Fixture f(fake({"--modern"}));
  ASSERT_TRUE(f.load().ok());
  EXPECT_EQ(f.client->protocol_version(), "2026-07-28");
  EXPECT_EQ(f.registry.size(), 10u);
  ToolResult echo = f.call("echo", R"({"message": "stateless"})");  // the server rejects requests without _meta
  ASSERT_TRUE(echo.ok()) << echo.error().message;
  EXPECT_EQ(echo.value().find("text")->as_string(), "Echo: stateless");
}

TEST(McpClient, IncludeExcludeAndPrefix) {
  auto cfg = fake();
  cfg.prefix = "f_";
  cfg.include = {"echo", "add", "hang"};
  cfg.exclude = {"hang"};
  Fixture f(cfg);
  ASSERT_TRUE(f.load().ok());
  EXPECT_EQ(f.registry.names(), (std::vector<std::string>{"f_echo", "f_add"}));
  ToolResult echo = f.call("f_echo", R"({"message": "x"})");
  ASSERT_TRUE(echo.ok());
  EXPECT_EQ(echo.value().find("text")->as_string(), "Echo: x");

  auto bad = fake();
  bad.include = {"ecko"};
  Fixture g(bad);
  base::Status st = g.load();
  EXPECT_EQ(st.code(), base::Code::kNotFound);
  EXPECT_TRUE(contains(st.message(), "has no tool 'ecko'")) << st.message();
}

// Each broken behaviour is a tool error of the right kind; the next call works.
TEST(McpClient, FailuresAreToolErrorsAndTheServerRestarts) {
  Fixture f(fake());
  ASSERT_TRUE(f.load().ok());
  struct Case {
    const char* tool;
    ToolErrorKind kind;
    const char* text;
    bool restarts;
  };
  const Case cases[] = {
      {"crash", ToolErrorKind::kCrashed, "exited with status 3", true},
      {"garbage", ToolErrorKind::kCrashed, "not JSON-RPC", true},
      {"big", ToolErrorKind::kOutputTooLarge, "longer than 65536 bytes", true},
      {"hang", ToolErrorKind::kTimeout, "did not answer tools/call", true},
      {"rpc_error", ToolErrorKind::kFailed, "JSON-RPC error -32603: internal failure on purpose", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.tool);
    const int before = f.client->starts();
    EXPECT_TOOL_ERROR(f.call(c.tool), c.kind, c.text);
    ToolResult echo = f.call("echo", R"({"message": "still here"})");
    ASSERT_TRUE(echo.ok()) << echo.error().message;
    EXPECT_EQ(echo.value().find("text")->as_string(), "Echo: still here");
    EXPECT_EQ(f.client->starts(), before + (c.restarts ? 1 : 0));
  }
  // The crash message carries the end of the server's stderr, and stderr reached the log.
  Fixture g(fake());
  ASSERT_TRUE(g.load().ok());
  EXPECT_TOOL_ERROR(g.call("crash"), ToolErrorKind::kCrashed, "crashing on purpose");
  EXPECT_TRUE(g.logged("crashing on purpose"));
}

// The caller's deadline (a step timeout) stops a hung call even when the server's own timeout is
// longer; the next call gets a fresh server.
TEST(McpClient, CallerDeadlineStopsAHungServer) {
  auto cfg = fake();
  cfg.timeout = 60s;
  Fixture f(cfg);
  ASSERT_TRUE(f.load().ok());
  EXPECT_TOOL_ERROR(f.call("hang", "{}", f.h.ctx(300ms)), ToolErrorKind::kTimeout, "hang");
  ToolResult echo = f.call("echo", R"({"message": "after"})");
  ASSERT_TRUE(echo.ok()) << echo.error().message;
  EXPECT_EQ(f.client->starts(), 2);
}

TEST(McpClient, StartFailuresNameTheCause) {
  Fixture dead(fake({"--die-at-start"}));
  base::Status st = dead.load();
  EXPECT_EQ(st.code(), base::Code::kUnavailable);
  EXPECT_TRUE(contains(st.message(), "exited with status 4")) << st.message();
  EXPECT_TRUE(contains(st.message(), "refusing to start")) << st.message();

  Fixture old(fake({"--bad-version"}));
  st = old.load();
  EXPECT_TRUE(contains(st.message(), "\"1999-01-01\", which dloop does not speak")) << st.message();

  auto missing = fake();
  missing.argv = {"/nonexistent/mcp-server"};
  Fixture none(missing);
  st = none.load();
  EXPECT_TRUE(contains(st.message(), "cannot start '/nonexistent/mcp-server'")) << st.message();
}

TEST(McpClient, StderrLinesReachTheLogAndShutdownEndsTheServer) {
  Fixture f(fake());
  ASSERT_TRUE(f.load().ok());
  ASSERT_TRUE(f.call("stderr").ok());
  // The line may arrive after the answer: let the loop run until it is read (bounded).
  f.h.io().restart();
  for (int i = 0; i < 100 && !f.logged("a line on stderr"); ++i) f.h.io().run_one_for(50ms);
  EXPECT_TRUE(f.logged("stderr: fake server: a line on stderr"));
  EXPECT_TRUE(f.client->running());
  f.shutdown();
  EXPECT_FALSE(f.client->running());
}

}  // namespace
}  // namespace dloop::tools::testing
