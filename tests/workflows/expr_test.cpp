// The expression language: tokenizer and parser (precedence, literals, errors with offsets,
// limits), the evaluator (types, paths, short-circuit, errors naming the expression) and the
// function table.
#include <gtest/gtest.h>

#include "dloop/workflows/expr.h"

namespace dloop::workflows {
namespace {

using base::Json;

EvalContext sample_context() {
  EvalContext c;
  Json inputs = Json::object();
  inputs.set("ticket", "Refund my order");
  inputs.set("count", 3);
  inputs.set("ratio", 0.5);
  inputs.set("tags", Json::array({"a", "b"}));
  inputs.set("empty", "");
  inputs.set("nothing", Json());
  c.set("inputs", inputs);
  Json out = Json::object();
  out.set("category", "billing");
  out.set("score", 0.75);
  Json classify = Json::object();
  classify.set("output", out);
  classify.set("status", "succeeded");
  Json steps = Json::object();
  steps.set("classify", classify);
  c.set("steps", steps);
  c.set("item", Json::object({{"name", "x.txt"}, {"not", true}}));
  return c;
}

Json eval(const std::string& text) {
  auto e = parse_expression(text);
  EXPECT_TRUE(e.ok()) << text << ": " << e.status().to_string();
  if (!e.ok()) return Json("<parse error>");
  auto v = evaluate(*e, sample_context());
  EXPECT_TRUE(v.ok()) << text << ": " << v.status().to_string();
  return v.ok() ? *v : Json("<eval error>");
}

base::Status eval_error(const std::string& text) {
  auto e = parse_expression(text);
  EXPECT_TRUE(e.ok()) << text << ": " << e.status().to_string();
  if (!e.ok()) return e.status();
  auto v = evaluate(*e, sample_context());
  EXPECT_FALSE(v.ok()) << text << " evaluated to " << (v.ok() ? v->dump() : "");
  return v.status();
}

SyntaxError parse_error(const std::string& text) {
  SyntaxError err;
  auto e = parse_expression(text, err);
  EXPECT_FALSE(e.ok()) << text;
  return err;
}

TEST(ExprLiterals, NumbersStringsKeywords) {
  EXPECT_EQ(eval("42"), Json(42));
  EXPECT_TRUE(eval("42").is_int());
  EXPECT_EQ(eval("-7"), Json(-7));
  EXPECT_EQ(eval("2.5"), Json(2.5));
  EXPECT_EQ(eval("1e3"), Json(1000.0));
  EXPECT_TRUE(eval("1e3").is_double());
  EXPECT_EQ(eval("'single'"), Json("single"));
  EXPECT_EQ(eval("\"double\""), Json("double"));
  EXPECT_EQ(eval(R"('it\'s')"), Json("it's"));
  EXPECT_EQ(eval(R"("a\nb\t\"c\"\\")"), Json("a\nb\t\"c\"\\"));
  EXPECT_EQ(eval("true"), Json(true));
  EXPECT_EQ(eval("false"), Json(false));
  EXPECT_TRUE(eval("null").is_null());
  EXPECT_EQ(eval("[1, 'a', [true]]"), Json::array({1, "a", Json::array({true})}));
  EXPECT_EQ(eval("[]"), Json::array());
  EXPECT_EQ(eval("99999999999999999999").type(), Json::Type::kDouble);  // past int64
}

TEST(ExprPrecedence, FollowsTheDocumentedTable) {
  EXPECT_EQ(eval("true || false && false"), Json(true));   // && binds tighter than ||
  EXPECT_EQ(eval("(true || false) && false"), Json(false));
  EXPECT_EQ(eval("!true == false"), Json(true));           // ! binds tighter than ==
  EXPECT_EQ(eval("!(1 == 2)"), Json(true));
  EXPECT_EQ(eval("1 < 2 == 2 < 3"), Json(true));           // relational before equality
  EXPECT_EQ(eval("1 == 1 && 2 == 2"), Json(true));
  EXPECT_EQ(eval("not false and true or false"), Json(true));
  EXPECT_EQ(eval("not (true and false)"), Json(true));
  EXPECT_EQ(eval("!!inputs.count"), Json(true));
}

TEST(ExprComparisons, TypesAndValues) {
  EXPECT_EQ(eval("1 == 1.0"), Json(true));
  EXPECT_EQ(eval("'1' == 1"), Json(false));  // no coercion
  EXPECT_EQ(eval("null == null"), Json(true));
  EXPECT_EQ(eval("inputs.nothing == null"), Json(true));
  EXPECT_EQ(eval("inputs.tags == ['a', 'b']"), Json(true));
  EXPECT_EQ(eval("inputs.tags != ['b', 'a']"), Json(true));
  EXPECT_EQ(eval("'abc' < 'abd'"), Json(true));
  EXPECT_EQ(eval("'b' >= 'a'"), Json(true));
  EXPECT_EQ(eval("inputs.count > 2"), Json(true));
  EXPECT_EQ(eval("inputs.ratio <= 0.5"), Json(true));
  EXPECT_EQ(eval("inputs.count < 2.5"), Json(false));
  base::Status s = eval_error("inputs.ticket < 3");
  EXPECT_EQ(s.code(), base::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "${{ inputs.ticket < 3 }}: cannot compare a string with a number using '<' "
                         "(only numbers with numbers and strings with strings)");
}

TEST(ExprLogic, ShortCircuitReturnsAnOperand) {
  EXPECT_EQ(eval("false && nosuch.thing"), Json(false));
  EXPECT_EQ(eval("true || nosuch.thing"), Json(true));
  EXPECT_EQ(eval("inputs.empty || 'anonymous'"), Json("anonymous"));
  EXPECT_EQ(eval("inputs.ticket || 'anonymous'"), Json("Refund my order"));
  EXPECT_EQ(eval("inputs.count && 'yes'"), Json("yes"));
  EXPECT_EQ(eval("!inputs.empty"), Json(true));
  EXPECT_EQ(eval("![]"), Json(true));
  EXPECT_EQ(eval("!0"), Json(true));
}

TEST(ExprTruthy, Table) {
  EXPECT_FALSE(truthy(Json()));
  EXPECT_FALSE(truthy(Json(false)));
  EXPECT_FALSE(truthy(Json(0)));
  EXPECT_FALSE(truthy(Json(0.0)));
  EXPECT_FALSE(truthy(Json("")));
  EXPECT_FALSE(truthy(Json::array()));
  EXPECT_FALSE(truthy(Json::object()));
  EXPECT_TRUE(truthy(Json("false")));
  EXPECT_TRUE(truthy(Json(-1)));
  EXPECT_TRUE(truthy(Json::array({Json()})));
}

TEST(ExprPaths, PropertyAndIndexAccess) {
  EXPECT_EQ(eval("steps.classify.output.category"), Json("billing"));
  EXPECT_EQ(eval("steps['classify'].output['category']"), Json("billing"));
  EXPECT_EQ(eval("steps.classify.status"), Json("succeeded"));
  EXPECT_EQ(eval("inputs.tags[0]"), Json("a"));
  EXPECT_EQ(eval("inputs.tags[-1]"), Json("b"));
}

TEST(ExprPaths, KeywordsAreFinePropertyNames) {
  EXPECT_EQ(eval("item.not"), Json(true));
  EXPECT_EQ(eval("item.name"), Json("x.txt"));
  EXPECT_EQ(eval("[10, 20][1]"), Json(20));
}

TEST(ExprPaths, MissingPathsAreNotFoundErrors) {
  base::Status s = eval_error("steps.classify.output.categry");
  EXPECT_EQ(s.code(), base::Code::kNotFound);
  EXPECT_EQ(s.message(), "${{ steps.classify.output.categry }}: steps.classify.output has no key 'categry' "
                         "(did you mean 'category'?)");
  s = eval_error("inputs.nothing.field");
  EXPECT_EQ(s.code(), base::Code::kNotFound);
  EXPECT_EQ(s.message(), "${{ inputs.nothing.field }}: inputs.nothing is null, so it has no key 'field'");
  s = eval_error("inputs.tags[5]");
  EXPECT_EQ(s.code(), base::Code::kNotFound);
  EXPECT_EQ(s.message(), "${{ inputs.tags[5] }}: index 5 is out of range for inputs.tags (length 2)");
  s = eval_error("inpts.count");
  EXPECT_EQ(s.code(), base::Code::kNotFound);
  EXPECT_EQ(s.message(), "${{ inpts.count }}: unknown name 'inpts' (did you mean 'inputs'?)");
}

TEST(ExprPaths, TypeMismatchesAreInvalidArgument) {
  base::Status s = eval_error("inputs.count.digits");
  EXPECT_EQ(s.code(), base::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "${{ inputs.count.digits }}: inputs.count is a number, not an object (reading 'digits')");
  s = eval_error("inputs.ticket[0]");
  EXPECT_EQ(s.message(), "${{ inputs.ticket[0] }}: inputs.ticket is a string, not a list (indexing with 0)");
  s = eval_error("inputs.tags[true]");
  EXPECT_EQ(s.message(), "${{ inputs.tags[true] }}: an index must be an integer or a string, got a boolean");
}

TEST(ExprFunctions, EachFunction) {
  EXPECT_EQ(eval("length('héllo')"), Json(5));  // code points
  EXPECT_EQ(eval("length(inputs.tags)"), Json(2));
  EXPECT_EQ(eval("length(steps.classify)"), Json(2));
  EXPECT_EQ(eval("contains(inputs.ticket, 'order')"), Json(true));
  EXPECT_EQ(eval("contains(inputs.tags, 'c')"), Json(false));
  EXPECT_EQ(eval("contains([1, 2], 2.0)"), Json(true));
  EXPECT_EQ(eval("contains(steps.classify.output, 'score')"), Json(true));
  EXPECT_EQ(eval("json(inputs.tags)"), Json("[\"a\",\"b\"]"));
  EXPECT_EQ(eval("json('x')"), Json("\"x\""));
  EXPECT_EQ(eval("fromjson('{\"a\": [1, 2]}').a[1]"), Json(2));
  EXPECT_EQ(eval("default(inputs.missing, 'fallback')"), Json("fallback"));
  EXPECT_EQ(eval("default(inputs.nothing, 7)"), Json(7));
  EXPECT_EQ(eval("default(inputs.count, 7)"), Json(3));
  EXPECT_EQ(eval("default(steps.nope.output.x, 'none')"), Json("none"));
  EXPECT_EQ(eval("lower('MiXeD')"), Json("mixed"));
  EXPECT_EQ(eval("upper('MiXeD')"), Json("MIXED"));
  EXPECT_EQ(eval("join(inputs.tags)"), Json("a,b"));
  EXPECT_EQ(eval("join([1, 'x', null, true], ' | ')"), Json("1 | x |  | true"));
  EXPECT_EQ(eval("format('{0} has {1} tags {{ok}}', inputs.ticket, length(inputs.tags))"),
            Json("Refund my order has 2 tags {ok}"));
}

TEST(ExprFunctions, Errors) {
  EXPECT_EQ(eval_error("length(3)").message(), "${{ length(3) }}: length(): needs a string, list or object, got a number");
  EXPECT_EQ(eval_error("fromjson('{')").code(), base::Code::kInvalidArgument);
  EXPECT_EQ(eval_error("format('{2}', 1)").message(),
            "${{ format('{2}', 1) }}: format(): placeholder {2} has no argument (1 given)");
  EXPECT_EQ(eval_error("contains(null, 1)").message(),
            "${{ contains(null, 1) }}: contains(): needs a string, list or object to search, got null");
  // default() hides only a missing path, not a type error.
  EXPECT_EQ(eval_error("default(inputs.count.x, 1)").code(), base::Code::kInvalidArgument);
}

TEST(ExprSyntax, ErrorsCarryOffsets) {
  struct Case {
    const char* text;
    size_t offset;
    const char* message;
  };
  const Case cases[] = {
      {"a ==", 4, "expected a value but found end of expression"},
      {"a = b", 2, "'=' is not an operator (did you mean '=='?)"},
      {"a & b", 2, "'&' is not an operator (did you mean '&&'?)"},
      {"a | b", 2, "'|' is not an operator (did you mean '||'?)"},
      {"(a", 2, "expected ')' but found end of expression"},
      {"'abc", 0, "unterminated string"},
      {"a b", 2, "unexpected 'b' after the end of the expression"},
      {"1 + 2", 2, "unexpected character '+' (there is no arithmetic)"},
      {"a.", 2, "expected a property name after '.' but found end of expression"},
      {"a[1", 3, "expected ']' but found end of expression"},
      {"lenght(x)", 0, "unknown function 'lenght' (did you mean 'length'?)"},
      {"length(1, 2)", 0, "length() takes 1 argument, got 2"},
      {"join()", 0, "join() takes 1 or 2 arguments, got 0"},
      {"format()", 0, "format() takes at least 1 argument, got 0"},
      {"f(1, ", 0, "unknown function 'f'"},
      {"length(1 2)", 9, "expected ',' or ')' but found '2'"},
      {"a.b(1)", 3, "only functions can be called: unexpected '('"},
      {"'a\\qb'", 2, "bad escape '\\q' in string (use \\\\, \\', \\\", \\n, \\t or \\r)"},
      {"12abc", 0, "bad number '12a'"},
      {"", 0, "empty expression"},
      {"and", 0, "expected a value but found 'and'"},
      {"a @ b", 2, "unexpected character '@'"},
  };
  for (const auto& c : cases) {
    SyntaxError err = parse_error(c.text);
    EXPECT_EQ(err.offset, c.offset) << c.text;
    EXPECT_EQ(err.message, c.message) << c.text;
  }
  auto r = parse_expression("a ==");
  EXPECT_EQ(r.status().message(), "column 5: expected a value but found end of expression");
}

TEST(ExprSyntax, LimitsStopHostileInput) {
  std::string deep = std::string(200, '(') + "1" + std::string(200, ')');
  SyntaxError err = parse_error(deep);
  EXPECT_EQ(err.message, "expression nests too deeply (the limit is 64 levels)");
  std::string nots(500, '!');
  EXPECT_EQ(parse_error(nots + "true").message, "expression nests too deeply (the limit is 64 levels)");
  std::string brackets;
  for (int i = 0; i < 200; ++i) brackets += "a[";
  EXPECT_EQ(parse_error(brackets).message, "expression nests too deeply (the limit is 64 levels)");
  std::string long_text(kMaxExpressionLength + 1, 'a');
  EXPECT_EQ(parse_error(long_text).message, "expression is too long (4097 bytes; the limit is 4096)");
  std::string ok = std::string(30, '(') + "1" + std::string(30, ')');
  EXPECT_TRUE(parse_expression(ok).ok());
}

TEST(ExprPathsOf, StaticPrefixesAndOffsets) {
  auto e = parse_expression("steps.a.output[inputs.k].x == item['name'] && length(run.id)");
  ASSERT_TRUE(e.ok());
  auto paths = e->paths();
  ASSERT_EQ(paths.size(), 4u);
  EXPECT_EQ(paths[0].segments, (std::vector<std::string>{"steps", "a", "output"}));
  EXPECT_EQ(paths[0].offsets, (std::vector<size_t>{0, 6, 8}));
  EXPECT_EQ(paths[1].segments, (std::vector<std::string>{"inputs", "k"}));
  EXPECT_EQ(paths[1].offsets, (std::vector<size_t>{15, 22}));
  EXPECT_EQ(paths[2].segments, (std::vector<std::string>{"item", "name"}));
  EXPECT_EQ(paths[3].segments, (std::vector<std::string>{"run", "id"}));
  auto lit = parse_expression("'x'");
  ASSERT_TRUE(lit.ok());
  ASSERT_NE(lit->literal(), nullptr);
  EXPECT_EQ(*lit->literal(), Json("x"));
  EXPECT_EQ(parse_expression("a")->literal(), nullptr);
}

TEST(ExprContext, SetBindAndReplace) {
  EvalContext c;
  Json big = Json::object({{"k", 1}});
  c.bind("b", big);
  c.set("o", Json(2));
  auto e = parse_expression("b.k == 1 && o == 2");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(*evaluate(*e, c), Json(true));
  c.set("o", Json(3));
  EXPECT_EQ(*evaluate(*e, c), Json(false));
  EXPECT_EQ(c.names(), (std::vector<std::string>{"b", "o"}));
  EXPECT_EQ(c.lookup("zzz"), nullptr);
}

}  // namespace
}  // namespace dloop::workflows
