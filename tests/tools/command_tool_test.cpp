// Command tools: scripts written by the test speak JSON on stdin/stdout; every way a program can
// misbehave becomes a clear tool error.
#include <signal.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include "dloop/tools/command_tool.h"
#include "test_util.h"

namespace dloop::tools {
namespace {

using namespace testing;

constexpr const char* kParams = R"({"type": "object", "properties": {"order_id": {"type": "string"}},
                                    "required": ["order_id"]})";

class CommandTools : public ::testing::Test {
 protected:
  CommandTools() { h.set_workspace(ws.path()); }

  std::shared_ptr<Tool> tool(const std::string& script, const std::string& extra = "") {
    dir.write("tool.sh", "#!/bin/sh\n" + script, /*executable=*/true);
    Json decl = J(R"({"name": "lookup_order", "command": ["./tool.sh"], "parameters": )" + std::string(kParams) +
                  extra + "}");
    auto t = make_command_tool(decl, dir.path());
    EXPECT_TRUE(t.ok()) << t.status().to_string();
    return t.ok() ? *t : nullptr;
  }
  std::string decl_error(const std::string& json) {
    auto t = make_command_tool(J(json), dir.path());
    return t.ok() ? "" : t.status().message();
  }

  Harness h;
  TempDir dir;  // where the workflow file (and its scripts) live
  TempDir ws;   // the run's workspace
};

TEST_F(CommandTools, GoodJson) {
  auto t = tool(R"sh(read line; printf '{"args": %s, "cwd": "%s", "tool": "%s"}\n' "$line" "$(pwd)" "$DLOOP_TOOL")sh");
  EXPECT_EQ(t->name(), "lookup_order");
  EXPECT_EQ(t->description(), "Runs " + (dir / "tool.sh").string());
  ToolResult r = h.call(t, R"({"order_id": "A-17"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value(), J(R"({"args": {"order_id": "A-17"}, "cwd": ")" + ws.path().string() + R"(", "tool": "lookup_order"})"));
}

TEST_F(CommandTools, ArgumentsAreValidatedBeforeTheProcessRuns) {
  auto t = tool("touch " + (dir / "ran").string() + "; echo '{}'");
  EXPECT_TOOL_ERROR(h.call(t, R"({"order_id": 17})"), ToolErrorKind::kInvalidArguments, "#/order_id: expected string");
  EXPECT_FALSE(std::filesystem::exists(dir / "ran"));
  EXPECT_TRUE(h.call(t, R"({"order_id": "17"})").ok());
  EXPECT_TRUE(std::filesystem::exists(dir / "ran"));
}

TEST_F(CommandTools, BadJson) {
  auto t = tool("echo 'not json at all'; echo 'warning: db is stale' >&2");
  ToolResult r = h.call(t, R"({"order_id": "1"})");
  EXPECT_TOOL_ERROR(r, ToolErrorKind::kCrashed, "'lookup_order' printed invalid JSON on stdout (");
  EXPECT_TRUE(contains(r.error().message, "stdout starts: not json at all"));
  EXPECT_TRUE(contains(r.error().message, "; stderr: warning: db is stale"));
  EXPECT_TOOL_ERROR(h.call(tool("exit 0"), R"({"order_id": "1"})"), ToolErrorKind::kCrashed,
                    "printed nothing on stdout (expected one JSON value)");
  EXPECT_TOOL_ERROR(h.call(tool("echo '{\"a\": 1} {\"b\": 2}'"), R"({"order_id": "1"})"), ToolErrorKind::kCrashed,
                    "invalid JSON");
}

TEST_F(CommandTools, NonZeroExit) {
  auto t = tool("echo '{\"partial\": true}'; echo 'order 1 not found' >&2; exit 1");
  EXPECT_TOOL_ERROR(h.call(t, R"({"order_id": "1"})"), ToolErrorKind::kFailed,
                    "'lookup_order' exited with status 1; stderr: order 1 not found");
}

TEST_F(CommandTools, SleepPastTimeout) {
  auto t = tool("echo $$ > " + (dir / "pid").string() + "; sleep 30; echo '{}'", R"(, "timeout": "300ms")");
  auto start = Clock::now();
  EXPECT_TOOL_ERROR(h.call(t, R"({"order_id": "1"})"), ToolErrorKind::kTimeout, "'lookup_order' timed out after");
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  pid_t pid = std::stoi(dir.read("pid"));
  EXPECT_NE(::kill(pid, 0), 0);  // killed and reaped: no such process
  // The call's deadline applies the same way when it is the shorter one.
  auto slow = tool("sleep 30", R"(, "timeout": "1h")");
  EXPECT_TOOL_ERROR(h.call(slow, R"({"order_id": "1"})", h.ctx(std::chrono::milliseconds(300))),
                    ToolErrorKind::kTimeout, "");
}

TEST_F(CommandTools, HugeOutput) {
  auto t = tool("yes '{\"x\": 1}'", R"(, "max_output_bytes": 50000)");
  EXPECT_TOOL_ERROR(h.call(t, R"({"order_id": "1"})"), ToolErrorKind::kOutputTooLarge,
                    "'lookup_order' wrote more than 50000 bytes to stdout and was killed");
}

TEST_F(CommandTools, KilledBySignal) {
  auto t = tool("echo 'about to die' >&2; kill -KILL $$");
  EXPECT_TOOL_ERROR(h.call(t, R"({"order_id": "1"})"), ToolErrorKind::kCrashed,
                    "'lookup_order' was killed by signal 9 (SIGKILL); stderr: about to die");
  EXPECT_TOOL_ERROR(h.call(tool("kill -SEGV $$"), R"({"order_id": "1"})"), ToolErrorKind::kCrashed, "signal 11 (SIGSEGV)");
}

TEST_F(CommandTools, CancelledByTheCaller) {
  auto t = tool("echo $$ > " + (dir / "pid").string() + "; sleep 30");
  asio::cancellation_signal signal;
  std::optional<ToolResult> got;
  asio::co_spawn(h.io(), invoke_validated(t, J(R"({"order_id": "1"})"), h.ctx(std::chrono::seconds(30))),
                 asio::bind_cancellation_slot(signal.slot(), [&](std::exception_ptr, ToolResult r) { got = r; }));
  asio::steady_timer timer(h.io(), std::chrono::milliseconds(300));
  timer.async_wait([&](boost::system::error_code) { signal.emit(asio::cancellation_type::terminal); });
  h.io().run();
  ASSERT_TRUE(got.has_value());
  EXPECT_TOOL_ERROR(*got, ToolErrorKind::kCancelled, "was cancelled");
  EXPECT_NE(::kill(std::stoi(dir.read("pid")), 0), 0);
}

TEST_F(CommandTools, EnvCwdAndDescription) {
  dir.write("sub/data.txt", "x");
  auto t = tool(R"sh(printf '{"mode": "%s", "home": "%s", "cwd": "%s"}' "$MODE" "${HOME:+set}" "$(pwd)")sh",
                R"(, "env": {"MODE": "fast"}, "cwd": "sub", "description": "Finds an order.")");
  EXPECT_EQ(t->description(), "Finds an order.");
  ToolResult r = h.call(t, R"({"order_id": "1"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value(), J(R"({"mode": "fast", "home": "set", "cwd": ")" + (dir / "sub").string() + R"("})"));
  auto bare = tool(R"(printf '{"home": "%s"}' "${HOME:-unset}")", R"(, "inherit_env": false)");
  EXPECT_EQ(h.call(bare, R"({"order_id": "1"})").value(), J(R"({"home": "unset"})"));
}

TEST_F(CommandTools, DeclarationErrors) {
  EXPECT_EQ(decl_error(R"({"name": "x", "command": "./tool.sh --fast", "parameters": {"type": "object"}})"),
            "x: command must be a list (argv), e.g. [./lookup.sh, --verbose]; it is never run through a shell");
  EXPECT_EQ(decl_error(R"({"name": "x", "command": [], "parameters": {"type": "object"}})"),
            "x: command is required (an argv list)");
  EXPECT_EQ(decl_error(R"({"name": "x", "command": ["a"]})"), "x: parameters is required (an object JSON Schema)");
  EXPECT_EQ(decl_error(R"({"name": "x", "command": ["a"], "parameters": {"type": "object", "format": "x"}})"),
            "x: parameters: #: unsupported keyword 'format' (use pattern)");
  EXPECT_EQ(decl_error(R"({"name": "x", "command": ["a"], "parameters": {"type": "string"}})"),
            "x: parameters must be an object schema (type: object)");
  EXPECT_EQ(decl_error(R"({"name": "x", "command": ["a"], "parameters": {"type": "object"}, "timout": "1s"})"),
            "x: unknown key 'timout' (did you mean 'timeout'?); allowed: name, description, command, parameters, "
            "timeout, env, inherit_env, cwd, max_output_bytes");
  EXPECT_EQ(decl_error(R"({"name": "x", "command": ["a"], "parameters": {"type": "object"}, "timeout": -1})"),
            "x: timeout must be a positive duration such as \"10s\", \"500ms\" or \"2m\"");
  EXPECT_EQ(decl_error(R"({"command": ["a"]})"), "a command tool needs a name");
  auto missing = make_command_tool(J(R"({"name": "x", "command": ["./nope.sh"], "parameters": {"type": "object"}})"),
                                   dir.path());
  ASSERT_TRUE(missing.ok());
  EXPECT_TOOL_ERROR(h.call(*missing, "{}"), ToolErrorKind::kFailed, "'x': cannot start '" + (dir / "nope.sh").string());
}

}  // namespace
}  // namespace dloop::tools
