// yaml-cpp -> YNode conversion. yaml-cpp reports errors by throwing; every call into it is inside
// the one try block here, so no exception leaves workflows/. yaml-cpp represents aliases as
// shared nodes (and `&a [*a]` as a cycle), so the walk counts nodes and depth and stops at the
// limits of load.h. Thread-safe: no shared state.
#include "yaml_tree.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdlib>
#include <exception>

#include "dloop/workflows/load.h"

namespace dloop::workflows::detail {
namespace {

bool is_int_text(std::string_view s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i >= s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

bool is_float_text(std::string_view s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  size_t digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') { ++i; ++digits; }
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') { ++i; ++digits; }
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exp = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') { ++i; ++exp; }
    if (exp == 0) return false;
  }
  return i == s.size();
}

struct Converter {
  Issues& issues;
  std::string_view text;
  LineIndex lines;
  size_t nodes = 0;
  bool over_budget = false;

  static Location at(const YAML::Mark& m) {
    if (m.line < 0 || m.column < 0) return {1, 1};
    return {m.line + 1, m.column + 1};
  }

  YNode convert(const YAML::Node& n, int depth) {
    YNode out;
    out.location = at(n.Mark());
    if (over_budget) return out;
    if (++nodes > kMaxYamlNodes) {
      over_budget = true;
      issues.error(out.location, "the document has more than " + std::to_string(kMaxYamlNodes) +
                                     " nodes once aliases are expanded");
      return out;
    }
    if (depth > kMaxYamlDepth) {
      over_budget = true;
      issues.error(out.location, "nesting is deeper than " + std::to_string(kMaxYamlDepth) +
                                     " levels (or an alias refers to itself)");
      return out;
    }
    switch (n.Type()) {
      case YAML::NodeType::Scalar: scalar(n, out); break;
      case YAML::NodeType::Sequence:
        out.kind = YNode::Kind::kSequence;
        for (const auto& item : n) out.items.push_back(convert(item, depth + 1));
        break;
      case YAML::NodeType::Map: map(n, out, depth); break;
      default: out.kind = YNode::Kind::kNull; break;
    }
    return out;
  }

  void scalar(const YAML::Node& n, YNode& out) {
    out.kind = YNode::Kind::kScalar;
    out.scalar = n.Scalar();
    const std::string& tag = n.Tag();
    if (tag == "?") return;
    if (tag == "!" || tag == "tag:yaml.org,2002:str") { out.plain = false; return; }
    issues.error(out.location, "unsupported YAML tag '" + tag + "' (tags are not used in workflow files)");
  }

  void map(const YAML::Node& n, YNode& out, int depth) {
    out.kind = YNode::Kind::kMap;
    for (auto it = n.begin(); it != n.end() && !over_budget; ++it) {
      YNode key = convert(it->first, depth + 1);
      YNode value = convert(it->second, depth + 1);
      if (!key.is_scalar()) {
        issues.error(key.location, "a mapping key must be a plain string, not " + std::string(type_phrase(key)));
        continue;
      }
      if (value.is_null() && !explicit_null(value.location)) value.location = key.location;
      bool duplicate = false;
      for (const auto& [k, v] : out.members) {
        if (k.scalar == key.scalar) {
          issues.error(key.location, "duplicate key '" + key.scalar + "' (first at line " +
                                         std::to_string(k.location.line) + ")");
          duplicate = true;
          break;
        }
      }
      if (!duplicate) out.members.emplace_back(std::move(key), std::move(value));
    }
  }

  // yaml-cpp places an empty value (`key:`) at the next token; `~` and `null` are where written.
  bool explicit_null(Location loc) const {
    size_t i = lines.offset(loc);
    if (i >= text.size()) return false;
    std::string_view rest = text.substr(i);
    return rest.substr(0, 1) == "~" || rest.substr(0, 4) == "null" || rest.substr(0, 4) == "Null" ||
           rest.substr(0, 4) == "NULL";
  }
};

// The 1-based line where a second YAML document starts, or 0. A document boundary is a line
// starting with "---" or "..." (followed by a space or the end of the line); the first "---" only
// opens the first document.
int second_document_line(std::string_view text) {
  bool content = false;  // the current document has content
  bool ended = false;    // "..." closed it
  int line = 0;
  for (size_t pos = 0; pos <= text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    ++line;
    pos = end + 1;
    const bool marker_start = l.substr(0, 3) == "---" && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    const bool marker_end = l.substr(0, 3) == "..." && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    std::string_view rest = marker_start || marker_end ? l.substr(3) : l;
    size_t first = rest.find_first_not_of(" \t\r");
    const bool has_content = first != std::string_view::npos && rest[first] != '#' && !(rest[first] == '%' && !marker_start);
    if (marker_start) {
      if (content || ended) return line;
      content = has_content;
    } else if (marker_end) {
      ended = ended || content;
    } else if (has_content) {
      if (ended) return line;
      content = true;
    }
    if (end == text.size()) break;
  }
  return 0;
}

}  // namespace

YNode::Type YNode::type() const {
  switch (kind) {
    case Kind::kNull: return Type::kNull;
    case Kind::kSequence: return Type::kList;
    case Kind::kMap: return Type::kMap;
    case Kind::kScalar: break;
  }
  if (!plain) return Type::kString;
  const std::string& s = scalar;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return Type::kNull;
  if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE") return Type::kBool;
  if (is_int_text(s)) {
    int64_t v;
    size_t skip = s[0] == '+' ? 1 : 0;
    auto [p, ec] = std::from_chars(s.data() + skip, s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size() ? Type::kInt : Type::kFloat;
  }
  if (is_float_text(s)) return Type::kFloat;
  return Type::kString;
}

const char* type_phrase(const YNode& node) {
  switch (node.type()) {
    case YNode::Type::kNull: return "null";
    case YNode::Type::kBool: return "a boolean";
    case YNode::Type::kInt:
    case YNode::Type::kFloat: return "a number";
    case YNode::Type::kString: return "a string";
    case YNode::Type::kList: return "a list";
    case YNode::Type::kMap: return "a mapping";
  }
  return "a value";
}

base::Json to_json(const YNode& node) {
  switch (node.type()) {
    case YNode::Type::kNull: return base::Json();
    case YNode::Type::kBool: return base::Json(node.scalar[0] == 't' || node.scalar[0] == 'T');
    case YNode::Type::kInt: {
      int64_t v = 0;
      size_t skip = node.scalar[0] == '+' ? 1 : 0;
      std::from_chars(node.scalar.data() + skip, node.scalar.data() + node.scalar.size(), v);
      return base::Json(v);
    }
    case YNode::Type::kFloat: return base::Json(std::strtod(node.scalar.c_str(), nullptr));
    case YNode::Type::kString: return base::Json(node.scalar);
    case YNode::Type::kList: {
      base::Json out = base::Json::array();
      for (const auto& item : node.items) out.push_back(to_json(item));
      return out;
    }
    case YNode::Type::kMap: {
      base::Json out = base::Json::object();
      for (const auto& [k, v] : node.members) out.set(k.scalar, to_json(v));
      return out;
    }
  }
  return base::Json();
}

std::optional<YNode> parse_yaml(std::string_view text, Issues& issues) {
  try {
    // YAML::Load reads the first document only; LoadAll is not used because yaml-cpp 0.7 loops
    // forever (allocating) on a stray ',' outside a flow collection.
    YAML::Node doc = YAML::Load(std::string(text));
    if (int line = second_document_line(text)) {
      issues.error({line, 1}, "a workflow file holds one YAML document; a second one starts here");
    }
    Converter c{issues, text, LineIndex(text)};
    return c.convert(doc, 0);
  } catch (const YAML::Exception& e) {
    std::string msg = e.msg.empty() ? "malformed YAML" : e.msg;
    issues.error(Converter::at(e.mark), "YAML syntax error: " + msg);
  } catch (const std::exception& e) {
    issues.error({1, 1}, std::string("YAML error: ") + e.what());
  }
  return std::nullopt;
}

}  // namespace dloop::workflows::detail
