// Values and templates of the loader: converts YAML values that may hold `${{ }}` into Values,
// reports expression syntax errors at their column in the file, and records every path an
// expression reads (with the scope at that point) for check_refs.cpp.
//
// Locating an offset inside a scalar: YAML may have unescaped or folded the text, so the n-th
// `${{` of the value is matched with the n-th `${{` of the source after the scalar's start, and
// the offset is counted from there. Exact for plain, quoted and block scalars unless an escape
// sequence sits inside the expression itself.
#include <string>

#include "loader.h"

namespace dloop::workflows::detail {

size_t Loader::push_scope() {
  if (scope_dirty_ || scopes_.empty()) {
    scopes_.push_back(scope_);
    scope_dirty_ = false;
  }
  return scopes_.size() - 1;
}

Location Loader::locate(const YNode& node, size_t offset) const {
  const size_t raw = lines_.offset(node.location);
  std::string_view value = node.scalar;
  size_t count = 0;
  size_t last = std::string_view::npos;
  for (size_t p = value.find("${{"); p != std::string_view::npos && p <= offset; p = value.find("${{", p + 3)) {
    ++count;
    last = p;
  }
  if (count == 0) {
    const bool quoted = raw < text_.size() && (text_[raw] == '"' || text_[raw] == '\'');
    return lines_.location(raw + (quoted ? 1 : 0) + offset);
  }
  size_t pos = raw;
  size_t found = std::string_view::npos;
  for (size_t i = 0; i < count; ++i) {
    found = text_.find("${{", pos);
    if (found == std::string_view::npos) return node.location;
    pos = found + 3;
  }
  return lines_.location(found + (offset - last));
}

std::optional<Template> Loader::parse_located(const YNode& node, std::string_view text, bool bare) {
  SyntaxError error;
  std::optional<Template> out;
  if (bare) {
    auto expr = parse_expression(text, error);
    if (expr.ok()) out = bare_expression_template(std::move(expr).value());
  } else {
    auto tmpl = parse_template(text, error);
    if (tmpl.ok()) out = std::move(tmpl).value();
  }
  if (!out) {
    issues_.error(locate(node, error.offset), "bad expression: " + error.message);
    return std::nullopt;
  }
  note_reads(node, *out);
  return out;
}

void Loader::note_reads(const YNode& node, const Template& tmpl) {
  for (const auto& part : tmpl.parts()) {
    if (!part.expr) continue;
    for (auto& path : part.expr->paths()) {
      ReadSite site;
      for (size_t off : path.offsets) site.locations.push_back(locate(node, part.offset + off));
      site.path = std::move(path);
      site.scope_index = push_scope();
      reads_.push_back(std::move(site));
    }
  }
}

Value Loader::to_value(const YNode& node) {
  Value v;
  v.location = node.location;
  if (node.is_string() && has_expression(node.scalar)) {
    auto tmpl = parse_located(node, node.scalar, false);
    if (!tmpl) return v;
    v.kind = Value::Kind::kTemplate;
    v.tmpl = std::move(*tmpl);
    return v;
  }
  if (node.is_seq() || node.is_map()) {
    bool literal = true;
    if (node.is_seq()) {
      v.kind = Value::Kind::kArray;
      for (const auto& item : node.items) {
        v.items.push_back(to_value(item));
        literal = literal && v.items.back().kind == Value::Kind::kLiteral;
      }
    } else {
      v.kind = Value::Kind::kObject;
      for (const auto& [k, item] : node.members) {
        v.members.emplace_back(k.scalar, to_value(item));
        literal = literal && v.members.back().second.kind == Value::Kind::kLiteral;
      }
    }
    if (!literal) return v;
    v.items.clear();
    v.members.clear();
    v.kind = Value::Kind::kLiteral;
  }
  v.literal = to_json(node);
  return v;
}

std::optional<Template> Loader::to_template(const YNode& node, const std::string& what) {
  if (!node.is_string()) {
    type_error(node, what, "a string");
    return std::nullopt;
  }
  return parse_located(node, node.scalar, false);
}

std::optional<Template> Loader::to_condition(const YNode& node, const std::string& what) {
  if (node.type() == YNode::Type::kBool) {
    return bare_expression_template(parse_expression(node.scalar[0] == 't' || node.scalar[0] == 'T' ? "true" : "false").value());
  }
  if (!node.is_string()) {
    type_error(node, what, "an expression or true/false");
    return std::nullopt;
  }
  if (!has_expression(node.scalar)) return parse_located(node, node.scalar, true);
  auto tmpl = parse_located(node, node.scalar, false);
  if (tmpl && !tmpl->single_expression()) {
    issues_.error(node.location, "'" + what + "' must be one expression such as '${{ a && b }}', not text around '${{ }}'");
    return std::nullopt;
  }
  return tmpl;
}

}  // namespace dloop::workflows::detail
