// The `${{ ... }}` expression language of workflow files: a tokenizer and recursive-descent parser
// to an immutable AST, and an evaluator over a context of base::Json values. It is a small,
// side-effect-free language: literals, names, property and index access, comparisons, boolean
// logic and a fixed table of pure functions. It cannot run code, read files or the environment
// (the caller decides what names exist), loop, or allocate without bound: the text is at most
// kMaxExpressionLength bytes and nesting at most kMaxExpressionDepth levels.
//
// Grammar (lowest precedence first; docs/workflows.md has the user-facing version):
//   or      := and (('||' | 'or') and)*
//   and     := eq (('&&' | 'and') eq)*
//   eq      := rel (('==' | '!=') rel)*
//   rel     := unary (('<' | '<=' | '>' | '>=') unary)*
//   unary   := ('!' | 'not') unary | postfix
//   postfix := primary ('.' NAME | '[' or ']')*
//   primary := NUMBER | STRING | true | false | null | NAME | NAME '(' args ')' | '(' or ')'
//            | '[' (or (',' or)*)? ']'
// Functions: length(x), contains(haystack, needle), json(x), fromjson(s), default(x, fallback),
// lower(s), upper(s), join(list, sep?), format(fmt, args...). `&&`/`||` short-circuit and return
// an operand (JavaScript style), so `inputs.name || 'anonymous'` works.
//
// Templates: a string with embedded `${{ expr }}`. When the trimmed string is exactly one
// expression it evaluates to that JSON value; otherwise each expression is converted to text
// (to_text) and spliced into the string.
//
// Expr and Template are immutable values, cheap to copy (shared AST) and safe to evaluate from
// many threads at once. EvalContext is not thread-safe to mutate.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/status.h"

namespace dloop::workflows {

inline constexpr size_t kMaxExpressionLength = 4096;  // bytes of one expression's text
inline constexpr int kMaxExpressionDepth = 64;        // nesting of parentheses, operators, calls

// Where and why an expression or template failed to parse. offset is a byte offset into the
// text that was given to the parser.
struct SyntaxError {
  size_t offset = 0;
  std::string message;
};

// A name path the expression reads, for static checks: `steps.a.output.x` gives segments
// {steps, a, output, x}. Segments stop at the first index that is not a literal (`a[i].b` gives
// {a}); literal indexes (`a['k']`, `a[0]`) continue the path ("k", "0").
struct PathRef {
  std::vector<std::string> segments;
  std::vector<size_t> offsets;  // byte offset of each segment in the expression text
};

namespace detail {
struct Node;
}
class EvalContext;

class Expr {
 public:
  const std::string& text() const { return text_; }
  // Every path read by the expression, in source order. Function names are not paths.
  std::vector<PathRef> paths() const;
  // A single literal (`true`, `'x'`, `3`): its value; nullptr otherwise.
  const base::Json* literal() const;

 private:
  friend base::Result<Expr> parse_expression(std::string_view text, SyntaxError& error);
  friend base::Result<base::Json> evaluate(const Expr& expr, const EvalContext& context);
  std::string text_;
  std::shared_ptr<const detail::Node> root_;
};

// Parses one expression (the text between `${{` and `}}`). Errors: invalid_argument with the
// message "column N: reason"; the overload with `error` also gives the offset and bare reason.
base::Result<Expr> parse_expression(std::string_view text);
base::Result<Expr> parse_expression(std::string_view text, SyntaxError& error);

// The names an expression may read. Values are owned (set) or borrowed (bind: the caller keeps
// the value alive and unchanged while evaluating). A later set/bind of the same name replaces it.
class EvalContext {
 public:
  void set(std::string name, base::Json value);
  void bind(std::string name, const base::Json& value);
  const base::Json* lookup(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  struct Entry {
    std::string name;
    std::shared_ptr<const base::Json> owned;
    const base::Json* value = nullptr;
  };
  std::vector<Entry> entries_;
};

// Evaluates an expression. Errors name the expression: not_found for a missing name, key or
// index ("${{ steps.a.output.x }}: steps.a.output has no key 'x'"), invalid_argument for a type
// mismatch ("cannot compare string with number").
base::Result<base::Json> evaluate(const Expr& expr, const EvalContext& context);

// Truthiness used by `if`, `until`, `!`, `&&` and `||`: null, false, 0, "", [] and {} are false.
bool truthy(const base::Json& value);
// Text form used by interpolation: strings as they are, null as "", everything else compact JSON.
std::string to_text(const base::Json& value);

// A string with embedded expressions.
class Template {
 public:
  struct Part {
    std::string literal;  // text, when expr is empty
    std::shared_ptr<const Expr> expr;
    size_t offset = 0;    // byte offset in the template text of the literal or the expression text
  };
  const std::string& text() const { return text_; }
  const std::vector<Part>& parts() const { return parts_; }
  // True when the whole trimmed string is one `${{ }}`: the template yields a JSON value.
  bool single_expression() const { return single_; }
  bool has_expressions() const;

 private:
  friend base::Result<Template> parse_template(std::string_view text, SyntaxError& error);
  friend Template bare_expression_template(Expr expr);
  std::string text_;
  std::vector<Part> parts_;
  bool single_ = false;
};

// Parses a template. Text with no `${{` is one literal part. Errors: an unterminated `${{`, an
// empty expression, or an expression syntax error; offsets are into `text`.
base::Result<Template> parse_template(std::string_view text);
base::Result<Template> parse_template(std::string_view text, SyntaxError& error);
// A template that is exactly one expression (for `if: a == b` written without `${{ }}`).
Template bare_expression_template(Expr expr);

// Evaluates a template: the expression's value for a single expression, else a string.
base::Result<base::Json> render(const Template& tmpl, const EvalContext& context);

// True when text contains `${{`.
bool has_expression(std::string_view text);

// The function table, for documentation and did-you-mean suggestions.
std::vector<std::string> function_names();

}  // namespace dloop::workflows
