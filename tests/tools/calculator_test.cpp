// calculator: arithmetic, precedence, functions, and every error is a tool error (no exceptions,
// no code execution).
#include <numbers>

#include "test_util.h"

namespace dloop::tools {
namespace {

using namespace testing;

Json eval(Harness& h, const std::shared_ptr<Tool>& calc, const std::string& expr) {
  Json args = Json::object();
  args.set("expression", expr);
  ToolResult r = h.run(invoke_validated(calc, args, h.ctx()));
  EXPECT_TRUE(r.ok()) << expr << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r.value().find("result") : Json();
}

ToolResult eval_error(Harness& h, const std::shared_ptr<Tool>& calc, const std::string& expr) {
  Json args = Json::object();
  args.set("expression", expr);
  return h.run(invoke_validated(calc, args, h.ctx()));
}

TEST(Calculator, Arithmetic) {
  Harness h;
  auto calc = builtin("calculator");
  EXPECT_EQ(eval(h, calc, "1 + 2 * 3"), Json(7));
  EXPECT_EQ(eval(h, calc, "(1 + 2) * 3"), Json(9));
  EXPECT_EQ(eval(h, calc, "10 / 4"), Json(2.5));
  EXPECT_EQ(eval(h, calc, "10 % 4"), Json(2));
  EXPECT_EQ(eval(h, calc, "2 ^ 10"), Json(1024));
  EXPECT_EQ(eval(h, calc, "2 ^ 3 ^ 2"), Json(512));  // right-associative
  EXPECT_EQ(eval(h, calc, "-2 ^ 2"), Json(-4));      // power binds tighter than unary minus
  EXPECT_EQ(eval(h, calc, "2 ^ -1"), Json(0.5));
  EXPECT_EQ(eval(h, calc, "--3"), Json(3));
  EXPECT_EQ(eval(h, calc, "1.5e3 + .5"), Json(1500.5));
  EXPECT_EQ(eval(h, calc, "7 - 2 - 1"), Json(4));    // left-associative
  EXPECT_EQ(eval(h, calc, "  8 /2/2 "), Json(2));
  EXPECT_EQ(eval(h, calc, "0.1 + 0.2"), Json(0.1 + 0.2));
}

TEST(Calculator, FunctionsAndConstants) {
  Harness h;
  auto calc = builtin("calculator");
  EXPECT_EQ(eval(h, calc, "sqrt(16) + abs(-3)"), Json(7));
  EXPECT_EQ(eval(h, calc, "min(4, 2, 8) + max(1, 9)"), Json(11));
  EXPECT_EQ(eval(h, calc, "round(2.5) + floor(2.7) + ceil(2.1)"), Json(8));
  EXPECT_EQ(eval(h, calc, "log(e)"), Json(1));
  EXPECT_EQ(eval(h, calc, "log(1000, 10)"), Json(2.9999999999999996));
  EXPECT_EQ(eval(h, calc, "exp(0)"), Json(1));
  EXPECT_DOUBLE_EQ(eval(h, calc, "2 * pi").as_double(), 2 * std::numbers::pi);
  EXPECT_EQ(eval(h, calc, "max(-1)"), Json(-1));
}

TEST(Calculator, Errors) {
  Harness h;
  auto calc = builtin("calculator");
  EXPECT_TOOL_ERROR(eval_error(h, calc, "1 / 0"), ToolErrorKind::kFailed, "division by zero");
  EXPECT_TOOL_ERROR(eval_error(h, calc, "5 % (2 - 2)"), ToolErrorKind::kFailed, "modulo by zero");
  EXPECT_TOOL_ERROR(eval_error(h, calc, "sqrt(-1)"), ToolErrorKind::kFailed, "sqrt() of a negative number");
  EXPECT_TOOL_ERROR(eval_error(h, calc, "log(0)"), ToolErrorKind::kFailed, "log() of a number <= 0");
  EXPECT_TOOL_ERROR(eval_error(h, calc, "10 ^ 400"), ToolErrorKind::kFailed, "not a finite number");
  EXPECT_TOOL_ERROR(eval_error(h, calc, "1 +"), ToolErrorKind::kInvalidArguments, "unexpected end of the expression");
  EXPECT_TOOL_ERROR(eval_error(h, calc, "(1 + 2"), ToolErrorKind::kInvalidArguments, "missing ')'");
  EXPECT_TOOL_ERROR(eval_error(h, calc, "1 2"), ToolErrorKind::kInvalidArguments, "unexpected '2' at position 3");
  EXPECT_TOOL_ERROR(eval_error(h, calc, "system(1)"), ToolErrorKind::kInvalidArguments, "unknown name 'system'");
  EXPECT_TOOL_ERROR(eval_error(h, calc, "x + 1"), ToolErrorKind::kInvalidArguments, "unknown name 'x'");
  EXPECT_TOOL_ERROR(eval_error(h, calc, "__import__('os')"), ToolErrorKind::kInvalidArguments, "unexpected '_'");
  EXPECT_TOOL_ERROR(eval_error(h, calc, "sqrt"), ToolErrorKind::kInvalidArguments, "expected '(' after sqrt");
  EXPECT_TOOL_ERROR(eval_error(h, calc, "sqrt(1, 2)"), ToolErrorKind::kInvalidArguments, "sqrt() takes 1 argument(s), got 2");
  EXPECT_TOOL_ERROR(eval_error(h, calc, "max()"), ToolErrorKind::kInvalidArguments, "max() takes at least 1 argument(s)");
  EXPECT_TOOL_ERROR(eval_error(h, calc, "1..2"), ToolErrorKind::kInvalidArguments, "malformed number '1..2'");
  EXPECT_TOOL_ERROR(eval_error(h, calc, ""), ToolErrorKind::kInvalidArguments, "unexpected end");
  EXPECT_TOOL_ERROR(eval_error(h, calc, std::string(5000, '(')), ToolErrorKind::kInvalidArguments, "longer than 1000");
  EXPECT_TOOL_ERROR(eval_error(h, calc, std::string(300, '(') + "1" + std::string(300, ')')),
                    ToolErrorKind::kInvalidArguments, "nests too deeply");
  EXPECT_TOOL_ERROR(h.call(calc, R"({"expression": 5})"), ToolErrorKind::kInvalidArguments,
                    "#/expression: expected string, got integer");
}

TEST(Calculator, Config) {
  Harness h;
  auto small = builtin("calculator", R"({"max_length": 5})");
  EXPECT_TOOL_ERROR(eval_error(h, small, "1+2+3+4"), ToolErrorKind::kInvalidArguments, "longer than 5 characters");
  EXPECT_EQ(config_error("calculator", R"({"max_length": 0})"),
            "calculator: with.max_length must be an integer in [1, 1000000]");
  EXPECT_EQ(config_error("calculator", R"({"precision": 2})"),
            "calculator: unknown `with:` key 'precision'; allowed: max_length");
}

}  // namespace
}  // namespace dloop::tools
