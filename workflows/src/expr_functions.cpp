// The function table of the expression language. Every function is pure: it reads its
// arguments and returns a value or an invalid_argument Status; none reads files, the
// environment or the clock. Adding a function is one entry in the table plus a line in
// docs/workflows.md. Thread-safe (the table is immutable).
#include <cstdint>
#include <string>

#include "dloop/workflows/expr.h"
#include "expr_ast.h"

namespace dloop::workflows::detail {
namespace {

using base::Json;
using base::Result;

base::Status wrong_type(const char* what, const Json& got) {
  return base::invalid_argument(std::string("needs ") + what + ", got " + json_type_phrase(got));
}

Result<Json> fn_length(const std::vector<Json>& a) {
  const Json& x = a[0];
  if (x.is_string()) {
    int64_t n = 0;  // UTF-8 code points: count the bytes that do not continue a sequence
    for (unsigned char c : x.as_string()) n += (c & 0xC0) != 0x80;
    return Json(n);
  }
  if (x.is_array() || x.is_object()) return Json(static_cast<int64_t>(x.size()));
  return wrong_type("a string, list or object", x);
}

Result<Json> fn_contains(const std::vector<Json>& a) {
  const Json& h = a[0];
  const Json& n = a[1];
  if (h.is_string()) {
    if (!n.is_string()) return wrong_type("a string to look for in a string", n);
    return Json(h.as_string().find(n.as_string()) != std::string::npos);
  }
  if (h.is_array()) {
    for (const auto& item : h.as_array()) {
      if (json_equal(item, n)) return Json(true);
    }
    return Json(false);
  }
  if (h.is_object()) {
    if (!n.is_string()) return wrong_type("a string key to look for in an object", n);
    return Json(h.find(n.as_string()) != nullptr);
  }
  return wrong_type("a string, list or object to search", h);
}

Result<Json> fn_json(const std::vector<Json>& a) { return Json(a[0].dump(Json::Style::kCompact)); }

Result<Json> fn_fromjson(const std::vector<Json>& a) {
  if (!a[0].is_string()) return wrong_type("a string", a[0]);
  auto parsed = Json::parse(a[0].as_string(), 64);
  if (!parsed.ok()) return base::invalid_argument(parsed.status().message());
  return std::move(parsed).value();
}

Result<Json> fn_case(const std::vector<Json>& a, bool upper) {
  if (!a[0].is_string()) return wrong_type("a string", a[0]);
  std::string s = a[0].as_string();
  for (char& c : s) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return Json(std::move(s));
}
Result<Json> fn_lower(const std::vector<Json>& a) { return fn_case(a, false); }
Result<Json> fn_upper(const std::vector<Json>& a) { return fn_case(a, true); }

Result<Json> fn_join(const std::vector<Json>& a) {
  if (!a[0].is_array()) return wrong_type("a list", a[0]);
  std::string sep = ",";
  if (a.size() > 1) {
    if (!a[1].is_string()) return wrong_type("a string separator", a[1]);
    sep = a[1].as_string();
  }
  std::string out;
  bool first = true;
  for (const auto& item : a[0].as_array()) {
    if (!first) out += sep;
    first = false;
    out += to_text(item);
  }
  return Json(std::move(out));
}

// format('{0} of {1}', a, b): {N} is the Nth argument after the format as text; {{ and }} are
// literal braces.
Result<Json> fn_format(const std::vector<Json>& a) {
  if (!a[0].is_string()) return wrong_type("a format string", a[0]);
  const std::string& f = a[0].as_string();
  std::string out;
  for (size_t i = 0; i < f.size(); ++i) {
    char c = f[i];
    if ((c == '{' || c == '}') && i + 1 < f.size() && f[i + 1] == c) { out += c; ++i; continue; }
    if (c == '}') return base::invalid_argument("unmatched '}' in the format (write '}}' for a brace)");
    if (c != '{') { out += c; continue; }
    size_t close = f.find('}', i);
    if (close == std::string::npos) return base::invalid_argument("unmatched '{' in the format (write '{{' for a brace)");
    std::string digits = f.substr(i + 1, close - i - 1);
    if (digits.empty() || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos) {
      return base::invalid_argument("bad placeholder '{" + digits + "}' (use {0}, {1}, ...)");
    }
    size_t n = std::stoul(digits);
    if (n + 1 >= a.size()) {
      return base::invalid_argument("placeholder {" + digits + "} has no argument (" + std::to_string(a.size() - 1) +
                                    " given)");
    }
    out += to_text(a[n + 1]);
    i = close;
  }
  return Json(std::move(out));
}

Result<Json> fn_unused(const std::vector<Json>&) { return base::internal_error("lazy function called eagerly"); }

}  // namespace

const std::vector<Function>& functions() {
  static const std::vector<Function> table = {
      {"length", 1, 1, &fn_length},
      {"contains", 2, 2, &fn_contains},
      {"json", 1, 1, &fn_json},
      {"fromjson", 1, 1, &fn_fromjson},
      {"default", 2, 2, &fn_unused, /*lazy=*/true},
      {"lower", 1, 1, &fn_lower},
      {"upper", 1, 1, &fn_upper},
      {"join", 1, 2, &fn_join},
      {"format", 1, SIZE_MAX, &fn_format},
  };
  return table;
}

const Function* find_function(const std::string& name) {
  for (const auto& f : functions()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

}  // namespace dloop::workflows::detail

namespace dloop::workflows {
std::vector<std::string> function_names() {
  std::vector<std::string> out;
  for (const auto& f : detail::functions()) out.emplace_back(f.name);
  return out;
}
}  // namespace dloop::workflows
