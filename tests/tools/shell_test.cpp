// shell: off unless configured, only allowed programs, argv never through a shell, timeout,
// output cap, a small environment.
#include "test_util.h"

namespace dloop::tools {
namespace {

using namespace testing;

TEST(Shell, OffUnlessConfigured) {
  EXPECT_TRUE(contains(config_error("shell", "null"), "the shell tool is off until with.allow lists the programs"));
  EXPECT_TRUE(contains(config_error("shell", R"({"allow": []})"), "is off until"));
  EXPECT_EQ(config_error("shell", R"({"allow": "ls"})"), "shell: with.allow must be a list of strings");
  EXPECT_EQ(config_error("shell", R"({"allow": ["ls"], "timeout": 0})"),
            "shell: with.timeout must be a positive duration such as \"10s\", \"500ms\" or \"2m\"");
}

TEST(Shell, RunsAllowedProgramsOnly) {
  Harness h;
  TempDir ws;
  ws.write("hello.txt", "hi there\n");
  h.set_workspace(ws.path());
  auto shell = builtin("shell", R"({"allow": ["cat", "echo", "sh"]})");
  ToolResult r = h.call(shell, R"({"argv": ["cat", "hello.txt"]})");  // runs in the workspace
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value(), J(R"({"exit_code": 0, "stdout": "hi there\n", "stderr": ""})"));
  EXPECT_TOOL_ERROR(h.call(shell, R"({"argv": ["rm", "-rf", "hello.txt"]})"), ToolErrorKind::kDenied,
                    "'rm' is not an allowed program; allowed: cat, echo, sh");
  EXPECT_TOOL_ERROR(h.call(shell, R"({"argv": ["/bin/cat", "hello.txt"]})"), ToolErrorKind::kDenied, "not an allowed program");
  EXPECT_TRUE(std::filesystem::exists(ws / "hello.txt"));
  EXPECT_TOOL_ERROR(h.call(shell, R"({"argv": []})"), ToolErrorKind::kInvalidArguments, "#/argv: must have at least 1 items");
  EXPECT_TOOL_ERROR(h.call(shell, R"({"argv": "cat hello.txt"})"), ToolErrorKind::kInvalidArguments,
                    "#/argv: expected array, got string");
}

TEST(Shell, ArgvIsNotInterpreted) {
  Harness h;
  auto shell = builtin("shell", R"({"allow": ["echo"]})");
  ToolResult r = h.call(shell, R"({"argv": ["echo", "$HOME; rm -rf / && `id` *"]})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r.value().find("stdout"), Json("$HOME; rm -rf / && `id` *\n"));
}

TEST(Shell, ExitCodesStdinAndEnv) {
  Harness h;
  ::setenv("DLOOP_TEST_SECRET", "s3cret", 1);
  auto shell = builtin("shell", R"({"allow": ["sh", "cat", "env"], "env": {"MODE": "test"}})");
  ToolResult r = h.call(shell, R"({"argv": ["sh", "-c", "echo oops >&2; exit 4"]})");
  ASSERT_TRUE(r.ok());  // a non-zero exit is a result the model can read, not a tool error
  EXPECT_EQ(r.value(), J(R"({"exit_code": 4, "stdout": "", "stderr": "oops\n"})"));
  ToolResult in = h.call(shell, R"({"argv": ["cat"], "stdin": "piped"})");
  EXPECT_EQ(*in.value().find("stdout"), Json("piped"));
  ToolResult env = h.call(shell, R"({"argv": ["env"]})");
  std::string out = env.value().find("stdout")->as_string();
  EXPECT_TRUE(contains(out, "MODE=test"));
  EXPECT_TRUE(contains(out, "PATH="));
  EXPECT_FALSE(contains(out, "DLOOP_TEST_SECRET"));  // the environment is not inherited by default
  auto inherit = builtin("shell", R"({"allow": ["env"], "inherit_env": true})");
  EXPECT_TRUE(contains(h.call(inherit, R"({"argv": ["env"]})").value().find("stdout")->as_string(), "DLOOP_TEST_SECRET=s3cret"));
}

TEST(Shell, TimeoutOutputCapSignalsMissingProgram) {
  Harness h;
  auto shell = builtin("shell", R"({"allow": ["sleep", "yes", "sh", "nonexistent-prog-q"], "timeout": "300ms",
                                     "max_output_bytes": 1000})");
  auto start = Clock::now();
  EXPECT_TOOL_ERROR(h.call(shell, R"({"argv": ["sleep", "30"]})"), ToolErrorKind::kTimeout, "'sleep' timed out after");
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_TOOL_ERROR(h.call(shell, R"({"argv": ["yes"]})"), ToolErrorKind::kOutputTooLarge, "wrote more than 1000 bytes");
  EXPECT_TOOL_ERROR(h.call(shell, R"({"argv": ["sh", "-c", "kill -9 $$"]})"), ToolErrorKind::kCrashed,
                    "was killed by signal 9 (SIGKILL)");
  EXPECT_TOOL_ERROR(h.call(shell, R"({"argv": ["nonexistent-prog-q"]})"), ToolErrorKind::kFailed,
                    "cannot start 'nonexistent-prog-q'");
}

}  // namespace
}  // namespace dloop::tools
