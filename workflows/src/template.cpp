// Templates: strings with embedded `${{ expr }}`. Parsing splits the text into literal and
// expression parts; rendering evaluates each expression and either returns the single value or
// splices text. A `}}` inside a quoted string in the expression does not close it.
// Thread-safe: Templates are immutable after parsing.
#include <string>

#include "dloop/base/strings.h"
#include "dloop/workflows/expr.h"

namespace dloop::workflows {
namespace {

// The offset of the `}}` closing an expression that starts at `from`, skipping quoted strings;
// npos when there is none.
size_t find_close(std::string_view s, size_t from) {
  for (size_t i = from; i + 1 < s.size(); ++i) {
    char c = s[i];
    if (c == '\'' || c == '"') {
      size_t j = i + 1;
      while (j < s.size() && s[j] != c) j += (s[j] == '\\') ? 2 : 1;
      if (j >= s.size()) return std::string_view::npos;
      i = j;
      continue;
    }
    if (c == '}' && s[i + 1] == '}') return i;
  }
  return std::string_view::npos;
}

}  // namespace

bool has_expression(std::string_view text) { return text.find("${{") != std::string_view::npos; }

bool Template::has_expressions() const {
  for (const auto& p : parts_) {
    if (p.expr) return true;
  }
  return false;
}

base::Result<Template> parse_template(std::string_view text, SyntaxError& error) {
  Template t;
  t.text_ = std::string(text);
  size_t pos = 0;
  size_t expressions = 0;
  while (pos < text.size()) {
    size_t open = text.find("${{", pos);
    if (open == std::string_view::npos) {
      t.parts_.push_back({std::string(text.substr(pos)), nullptr, pos});
      break;
    }
    if (open > pos) t.parts_.push_back({std::string(text.substr(pos, open - pos)), nullptr, pos});
    size_t close = find_close(text, open + 3);
    if (close == std::string_view::npos) {
      error = {open, "unterminated '${{' (no matching '}}')"};
      return base::invalid_argument("column " + std::to_string(open + 1) + ": " + error.message);
    }
    std::string_view inner = text.substr(open + 3, close - open - 3);
    std::string_view trimmed = base::trim(inner);
    size_t inner_offset = open + 3 + (trimmed.empty() ? 0 : static_cast<size_t>(trimmed.data() - inner.data()));
    if (trimmed.empty()) {
      error = {open, "empty expression in '${{ }}'"};
      return base::invalid_argument("column " + std::to_string(open + 1) + ": " + error.message);
    }
    SyntaxError inner_error;
    auto expr = parse_expression(trimmed, inner_error);
    if (!expr.ok()) {
      error = {inner_offset + inner_error.offset, inner_error.message};
      return base::invalid_argument("column " + std::to_string(error.offset + 1) + ": " + error.message);
    }
    t.parts_.push_back({"", std::make_shared<const Expr>(std::move(expr).value()), inner_offset});
    ++expressions;
    pos = close + 2;
  }
  if (expressions == 1) {
    t.single_ = true;
    for (const auto& p : t.parts_) {
      if (!p.expr && !base::trim(p.literal).empty()) t.single_ = false;
    }
    if (t.single_) {  // drop the whitespace-only literals around it
      std::vector<Template::Part> kept;
      for (auto& p : t.parts_) {
        if (p.expr) kept.push_back(std::move(p));
      }
      t.parts_ = std::move(kept);
    }
  }
  return t;
}

base::Result<Template> parse_template(std::string_view text) {
  SyntaxError ignored;
  return parse_template(text, ignored);
}

Template bare_expression_template(Expr expr) {
  Template t;
  t.text_ = expr.text();
  t.parts_.push_back({"", std::make_shared<const Expr>(std::move(expr)), 0});
  t.single_ = true;
  return t;
}

base::Result<base::Json> render(const Template& tmpl, const EvalContext& context) {
  if (tmpl.single_expression()) return evaluate(*tmpl.parts().front().expr, context);
  std::string out;
  for (const auto& p : tmpl.parts()) {
    if (!p.expr) { out += p.literal; continue; }
    DLOOP_ASSIGN_OR_RETURN(base::Json v, evaluate(*p.expr, context));
    out += to_text(v);
  }
  return base::Json(std::move(out));
}

}  // namespace dloop::workflows
