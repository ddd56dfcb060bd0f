// A located YAML tree: yaml-cpp's document converted into plain nodes that remember their line
// and column, whether a scalar was quoted, and the location of each mapping key (private to
// workflows/). yaml-cpp and its exceptions stay inside yaml_tree.cpp; the conversion bounds
// depth and node count (alias cycles and "billion laughs" expansions are errors, not crashes).
// Not thread-safe to mutate; the tree is a plain value.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diagnostics.h"
#include "dloop/base/json.h"

namespace dloop::workflows::detail {

struct YNode {
  enum class Kind { kNull, kScalar, kSequence, kMap };
  Kind kind = Kind::kNull;
  std::string scalar;  // kScalar: the text as YAML gives it
  bool plain = true;   // kScalar: false for quoted and block scalars (always strings)
  Location location;
  std::vector<YNode> items;                      // kSequence
  std::vector<std::pair<YNode, YNode>> members;  // kMap: key (a scalar) and value, file order

  bool is_map() const { return kind == Kind::kMap; }
  bool is_seq() const { return kind == Kind::kSequence; }
  bool is_scalar() const { return kind == Kind::kScalar; }
  bool is_null() const { return kind == Kind::kNull; }
  // A plain scalar's resolved type (YAML 1.2 core schema) or the node kind.
  enum class Type { kNull, kBool, kInt, kFloat, kString, kList, kMap };
  Type type() const;
  bool is_string() const { return type() == Type::kString; }
};

// "a string", "a number", "a boolean", "null", "a list", "a mapping".
const char* type_phrase(const YNode& node);
// The JSON form: plain scalars resolved to null/bool/int/float, everything else as strings.
base::Json to_json(const YNode& node);

// Parses one YAML document. Syntax errors, duplicate keys, non-scalar keys, multiple documents,
// too deep nesting and too many nodes are reported to `issues`; nullopt when the tree is
// unusable (a syntax error) and a partial tree otherwise.
std::optional<YNode> parse_yaml(std::string_view text, Issues& issues);

}  // namespace dloop::workflows::detail
