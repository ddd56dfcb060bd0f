// Registry and invoke_validated(): unique names, schema validation before the tool runs, the
// deadline (the tool is cancelled and awaited), the output cap, exceptions, cancellation.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "test_util.h"

namespace dloop::tools {
namespace {

using namespace testing;

// A tool that counts its calls, then sleeps `sleep_ms` (cancellable), then echoes or misbehaves.
class ProbeTool final : public Tool {
 public:
  explicit ProbeTool(std::string name = "probe")
      : Tool(std::move(name), "test tool",
             builtin_schema(R"({"type": "object", "properties": {"city": {"type": "string"},
                                 "days": {"type": "integer", "minimum": 1}}, "required": ["city"],
                                 "additionalProperties": false})")) {}

  int calls = 0;
  bool saw_cancel = false;
  int sleep_ms = 0;
  size_t output_bytes = 0;
  bool throw_error = false;

  asio::awaitable<ToolResult> invoke(Json args, ToolContext) override {
    ++calls;
    if (throw_error) throw std::runtime_error("kaboom");
    if (sleep_ms > 0) {
      asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(sleep_ms));
      auto [ec] = co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
      if (ec) {
        saw_cancel = true;
        co_return ToolResult::failure(ToolErrorKind::kCancelled, "stopped");
      }
    }
    if (output_bytes > 0) co_return ToolResult::success(Json(std::string(output_bytes, 'x')));
    co_return ToolResult::success(args);
  }
};

TEST(Registry, AddFindListDescribe) {
  Registry reg;
  ASSERT_TRUE(reg.add(std::make_shared<ProbeTool>("a")).ok());
  ASSERT_TRUE(reg.add(std::make_shared<ProbeTool>("b-2_x")).ok());
  EXPECT_EQ(reg.size(), 2u);
  EXPECT_EQ(reg.names(), (std::vector<std::string>{"a", "b-2_x"}));
  ASSERT_NE(reg.find("a"), nullptr);
  EXPECT_EQ(reg.find("zzz"), nullptr);
  Json d = reg.describe();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d.as_array()[0].find("name")->as_string(), "a");
  EXPECT_EQ(d.as_array()[0].find("description")->as_string(), "test tool");
  EXPECT_EQ(d.as_array()[0].find("parameters")->find("type")->as_string(), "object");
  Json o = reg.openai_tools();
  EXPECT_EQ(o.as_array()[1].find("type")->as_string(), "function");
  EXPECT_EQ(o.as_array()[1].find("function")->find("name")->as_string(), "b-2_x");
}

TEST(Registry, NameCollisionsAndBadNamesAreErrors) {
  Registry reg;
  ASSERT_TRUE(reg.add(std::make_shared<ProbeTool>("search")).ok());
  base::Status st = reg.add(std::make_shared<ProbeTool>("search"));
  EXPECT_EQ(st.code(), base::Code::kInvalidArgument);
  EXPECT_EQ(st.message(), "tool 'search' is already registered; tool names must be unique (rename one)");
  EXPECT_EQ(reg.size(), 1u);
  EXPECT_TRUE(contains(reg.add(std::make_shared<ProbeTool>("has space")).message(), "must be 1-64 characters"));
  EXPECT_FALSE(reg.add(std::make_shared<ProbeTool>("")).ok());
  EXPECT_FALSE(reg.add(std::make_shared<ProbeTool>(std::string(65, 'x'))).ok());
  // Built-ins collide the same way when two entries use one name.
  ASSERT_TRUE(reg.add(builtin("calculator")).ok());
  EXPECT_FALSE(reg.add(builtin("calculator")).ok());
}

TEST(Registry, ParametersMustBeAnObjectSchema) {
  class StringTool final : public Tool {
   public:
    StringTool() : Tool("s", "", builtin_schema(R"({"type": "string"})")) {}
    asio::awaitable<ToolResult> invoke(Json, ToolContext) override { co_return ToolResult(); }
  };
  Registry reg;
  EXPECT_TRUE(contains(reg.add(std::make_shared<StringTool>()).message(), "parameters must be an object schema"));
}

TEST(Registry, SubsetKeepsOrderAndNamesUnknownTools) {
  Registry reg;
  for (const char* n : {"alpha", "beta", "gamma"}) ASSERT_TRUE(reg.add(std::make_shared<ProbeTool>(n)).ok());
  auto sub = reg.subset({"gamma", "alpha"});
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(sub->names(), (std::vector<std::string>{"gamma", "alpha"}));
  auto bad = reg.subset({"alpha", "gamme"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "unknown tool 'gamme' (did you mean 'gamma'?); available: alpha, beta, gamma");
}

TEST(InvokeValidated, ValidatesBeforeRunning) {
  Harness h;
  auto probe = std::make_shared<ProbeTool>();
  ToolResult r = h.call(probe, R"({"city": 3, "days": 0, "extra": true})");
  EXPECT_TOOL_ERROR(r, ToolErrorKind::kInvalidArguments, "arguments do not match the parameters of 'probe': ");
  EXPECT_TRUE(contains(r.error().message, "#/city: expected string, got integer"));
  EXPECT_TRUE(contains(r.error().message, "#/days: must be >= 1"));
  EXPECT_TRUE(contains(r.error().message, "#/extra: unexpected property"));
  EXPECT_EQ(probe->calls, 0);  // never ran
  EXPECT_TOOL_ERROR(h.call(probe, "{}"), ToolErrorKind::kInvalidArguments, "#: missing required property 'city'");
  EXPECT_TOOL_ERROR(h.call(probe, "[]"), ToolErrorKind::kInvalidArguments, "#: expected object, got array");
  EXPECT_EQ(probe->calls, 0);

  ToolResult ok = h.call(probe, R"({"city": "Paris", "days": 2})");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value(), J(R"({"city": "Paris", "days": 2})"));
  EXPECT_EQ(probe->calls, 1);
}

TEST(InvokeValidated, DeadlineCancelsTheTool) {
  Harness h;
  auto probe = std::make_shared<ProbeTool>();
  probe->sleep_ms = 10'000;
  auto start = Clock::now();
  ToolResult r = h.call(probe, R"({"city": "x"})", h.ctx(std::chrono::milliseconds(100)));
  EXPECT_TOOL_ERROR(r, ToolErrorKind::kTimeout, "'probe' did not finish within");
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(probe->saw_cancel);  // the tool was cancelled and awaited before invoke returned
}

TEST(InvokeValidated, PastDeadlineDoesNotStart) {
  Harness h;
  auto probe = std::make_shared<ProbeTool>();
  ToolContext c = h.ctx();
  c.deadline = Clock::now() - std::chrono::seconds(1);
  EXPECT_TOOL_ERROR(h.call(probe, R"({"city": "x"})", c), ToolErrorKind::kTimeout, "was not started");
  EXPECT_EQ(probe->calls, 0);
}

TEST(InvokeValidated, OutputCap) {
  Harness h;
  auto probe = std::make_shared<ProbeTool>();
  probe->output_bytes = 5000;
  InvokeLimits limits;
  limits.max_output_bytes = 1000;
  EXPECT_TOOL_ERROR(h.call(probe, R"({"city": "x"})", h.ctx(), limits), ToolErrorKind::kOutputTooLarge,
                    "the result of 'probe' is 5002 bytes, over the cap of 1000 bytes");
  limits.max_output_bytes = 6000;
  EXPECT_TRUE(h.call(probe, R"({"city": "x"})", h.ctx(), limits).ok());
}

TEST(InvokeValidated, ExceptionsBecomeCrashed) {
  Harness h;
  auto probe = std::make_shared<ProbeTool>();
  probe->throw_error = true;
  EXPECT_TOOL_ERROR(h.call(probe, R"({"city": "x"})"), ToolErrorKind::kCrashed, "'probe' failed unexpectedly: kaboom");
  EXPECT_TOOL_ERROR(h.call(probe, R"({"city": "x"})", h.ctx(std::chrono::seconds(5))), ToolErrorKind::kCrashed, "kaboom");
}

TEST(InvokeValidated, CancellationFromTheCaller) {
  Harness h;
  auto probe = std::make_shared<ProbeTool>();
  probe->sleep_ms = 10'000;
  asio::cancellation_signal signal;
  std::optional<ToolResult> got;
  asio::co_spawn(h.io(), invoke_validated(probe, J(R"({"city": "x"})"), h.ctx(std::chrono::seconds(30))),
                 asio::bind_cancellation_slot(signal.slot(), [&](std::exception_ptr, ToolResult r) { got = r; }));
  asio::steady_timer t(h.io(), std::chrono::milliseconds(50));
  t.async_wait([&](boost::system::error_code) { signal.emit(asio::cancellation_type::terminal); });
  h.io().run();
  ASSERT_TRUE(got.has_value());
  EXPECT_TOOL_ERROR(*got, ToolErrorKind::kCancelled, "stopped");
  EXPECT_TRUE(probe->saw_cancel);
}

TEST(Registry, InvokeByName) {
  Harness h;
  Registry reg;
  ASSERT_TRUE(reg.add(builtin("calculator")).ok());
  ToolResult r = h.run(reg.invoke("calculator", J(R"({"expression": "1+2"})"), h.ctx()));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), J(R"({"result": 3})"));
  ToolResult bad = h.run(reg.invoke("calculater", J("{}"), h.ctx()));
  EXPECT_TOOL_ERROR(bad, ToolErrorKind::kInvalidArguments,
                    "there is no tool named 'calculater' (did you mean 'calculator'?); available tools: calculator");
}

TEST(ToolResult, JsonShapes) {
  EXPECT_EQ(ToolResult::success(J("[1]")).to_json(), J("[1]"));
  EXPECT_EQ(ToolResult::failure(ToolErrorKind::kOutputTooLarge, "m").to_json(),
            J(R"({"error": {"kind": "output_too_large", "message": "m"}})"));
  for (auto k : {ToolErrorKind::kInvalidArguments, ToolErrorKind::kTimeout, ToolErrorKind::kFailed,
                 ToolErrorKind::kCrashed, ToolErrorKind::kDenied, ToolErrorKind::kCancelled}) {
    EXPECT_NE(std::string(tool_error_kind_name(k)), "");
  }
}

TEST(Builtins, NamesAndUnknownUse) {
  EXPECT_EQ(builtin_names(), (std::vector<std::string>{"calculator", "file_read", "file_write", "file_list",
                                                       "http_request", "sqlite_query", "shell", "memory_get",
                                                       "memory_put", "retrieve"}));
  EXPECT_EQ(config_error("calculater", "null"),
            "unknown built-in tool 'calculater' (did you mean 'calculator'?); built-ins: calculator, file_read, "
            "file_write, file_list, http_request, sqlite_query, shell, memory_get, memory_put, retrieve");
  auto renamed = make_builtin({"calculator", "math", "Does math.", J("null")});
  ASSERT_TRUE(renamed.ok());
  EXPECT_EQ((*renamed)->name(), "math");
  EXPECT_EQ((*renamed)->description(), "Does math.");
  EXPECT_EQ(config_error("calculator", R"({"max_lenght": 5})"),
            "calculator: unknown `with:` key 'max_lenght' (did you mean 'max_length'?); allowed: max_length");
  EXPECT_EQ(config_error("calculator", "[1]"), "calculator: `with:` must be a mapping of options");
}

}  // namespace
}  // namespace dloop::tools
