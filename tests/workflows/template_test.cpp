// Templates: `${{ }}` inside strings. A string that is exactly one expression yields its JSON
// value; text around expressions makes a string. Syntax errors carry offsets into the string.
#include <gtest/gtest.h>

#include "dloop/workflows/expr.h"

namespace dloop::workflows {
namespace {

using base::Json;

EvalContext context() {
  EvalContext c;
  c.set("inputs", Json::object({{"n", 3}, {"name", "Ada"}, {"tags", Json::array({"x", "y"})}, {"none", Json()},
                                {"obj", Json::object({{"k", true}})}, {"ratio", 0.25}}));
  return c;
}

Json render_text(const std::string& text) {
  auto t = parse_template(text);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status().to_string();
  if (!t.ok()) return Json();
  auto v = render(*t, context());
  EXPECT_TRUE(v.ok()) << text << ": " << v.status().to_string();
  return v.ok() ? *v : Json();
}

TEST(Template, SingleExpressionKeepsTheType) {
  EXPECT_EQ(render_text("${{ inputs.n }}"), Json(3));
  EXPECT_EQ(render_text("  ${{ inputs.tags }}\n"), Json::array({"x", "y"}));
  EXPECT_EQ(render_text("${{inputs.obj}}"), Json::object({{"k", true}}));
  EXPECT_TRUE(render_text("${{ inputs.none }}").is_null());
  auto t = parse_template("${{ inputs.n }}");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->single_expression());
  EXPECT_TRUE(t->has_expressions());
}

TEST(Template, TextAroundInterpolates) {
  EXPECT_EQ(render_text("Hello ${{ inputs.name }}!"), Json("Hello Ada!"));
  EXPECT_EQ(render_text("n=${{ inputs.n }} r=${{ inputs.ratio }}"), Json("n=3 r=0.25"));
  EXPECT_EQ(render_text("[${{ inputs.none }}]"), Json("[]"));
  EXPECT_EQ(render_text("tags: ${{ inputs.tags }}"), Json("tags: [\"x\",\"y\"]"));
  EXPECT_EQ(render_text("${{ inputs.n }}${{ inputs.n }}"), Json("33"));
  EXPECT_EQ(render_text("${{ inputs.n }} }}"), Json("3 }}"));
  EXPECT_EQ(render_text("no expressions"), Json("no expressions"));
  EXPECT_EQ(render_text(""), Json(""));
  auto t = parse_template("plain");
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->has_expressions());
  EXPECT_FALSE(t->single_expression());
}

TEST(Template, ClosingBracesInsideStringsDoNotClose) {
  EXPECT_EQ(render_text("${{ '}}' }}"), Json("}}"));
  EXPECT_EQ(render_text("a${{ \"x}}y\" }}b"), Json("ax}}yb"));
  EXPECT_EQ(render_text("${{ format('{{{0}}}', inputs.n) }}"), Json("{3}"));
}

TEST(Template, PartsRecordOffsets) {
  auto t = parse_template("ab ${{  inputs.n }} cd");
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->parts().size(), 3u);
  EXPECT_EQ(t->parts()[0].literal, "ab ");
  EXPECT_EQ(t->parts()[1].offset, 8u);  // the expression text, after the spaces
  EXPECT_EQ(t->parts()[1].expr->text(), "inputs.n");
  EXPECT_EQ(t->parts()[2].offset, 19u);
}

TEST(Template, SyntaxErrors) {
  SyntaxError err;
  EXPECT_FALSE(parse_template("a ${{ inputs.n", err).ok());
  EXPECT_EQ(err.offset, 2u);
  EXPECT_EQ(err.message, "unterminated '${{' (no matching '}}')");
  EXPECT_FALSE(parse_template("x ${{   }}", err).ok());
  EXPECT_EQ(err.offset, 2u);
  EXPECT_EQ(err.message, "empty expression in '${{ }}'");
  auto r = parse_template("Hi ${{ inputs.n == }}", err);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(err.offset, 18u);
  EXPECT_EQ(err.message, "expected a value but found end of expression");
  EXPECT_EQ(r.status().message(), "column 19: expected a value but found end of expression");
}

TEST(Template, EvaluationErrorsNameTheExpression) {
  auto t = parse_template("Hi ${{ inputs.nam }}");
  ASSERT_TRUE(t.ok());
  auto v = render(*t, context());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), "${{ inputs.nam }}: inputs has no key 'nam' (did you mean 'name'?)");
}

TEST(Template, BareExpression) {
  auto e = parse_expression("inputs.n > 2");
  ASSERT_TRUE(e.ok());
  Template t = bare_expression_template(*e);
  EXPECT_TRUE(t.single_expression());
  EXPECT_EQ(*render(t, context()), Json(true));
}

TEST(Template, ToText) {
  EXPECT_EQ(to_text(Json("s")), "s");
  EXPECT_EQ(to_text(Json()), "");
  EXPECT_EQ(to_text(Json(true)), "true");
  EXPECT_EQ(to_text(Json(12)), "12");
  EXPECT_EQ(to_text(Json::object({{"a", 1}})), "{\"a\":1}");
  EXPECT_TRUE(has_expression("x ${{ y }}"));
  EXPECT_FALSE(has_expression("x ${ y }"));
}

}  // namespace
}  // namespace dloop::workflows
