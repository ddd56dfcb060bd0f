// Typed field readers of the loader: each reads one YAML node as a string, integer, duration,
// ... and reports a precise problem (wrong type with the value seen, out of range, unknown key
// with did-you-mean) at the node's location. They return nullopt after reporting, so callers
// keep going and every problem in the file is found in one pass.
#include <cstdint>
#include <string>

#include "dloop/base/strings.h"
#include "loader.h"

namespace dloop::workflows::detail {
namespace {

std::string quoted_value(const YNode& node) {
  if (!node.is_scalar()) return "";
  std::string s = node.scalar.size() > 40 ? node.scalar.substr(0, 37) + "..." : node.scalar;
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return " '" + s + "'";
}

}  // namespace

const YNode* Loader::find(const YNode& map, std::string_view key) const {
  if (!map.is_map()) return nullptr;
  for (const auto& [k, v] : map.members) {
    if (k.scalar == key) return &v;
  }
  return nullptr;
}

void Loader::check_keys(const YNode& map, const std::vector<std::string>& allowed, const std::string& context) {
  for (const auto& [k, v] : map.members) {
    bool known = false;
    for (const auto& a : allowed) known = known || a == k.scalar;
    if (known) continue;
    std::string msg = "unknown key '" + k.scalar + "' in " + context;
    if (auto close = closest_name(k.scalar, allowed)) msg += " (did you mean '" + *close + "'?)";
    issues_.error(k.location, msg);
  }
}

void Loader::type_error(const YNode& node, const std::string& what, const char* expected) {
  issues_.error(node.location, "'" + what + "' must be " + expected + ", got " + type_phrase(node) + quoted_value(node));
}

bool Loader::expect_map(const YNode& node, const std::string& what) {
  if (node.is_map()) return true;
  type_error(node, what, "a mapping");
  return false;
}

bool Loader::expect_list(const YNode& node, const std::string& what) {
  if (node.is_seq()) return true;
  type_error(node, what, "a list");
  return false;
}

void Loader::missing(const YNode& map, const std::string& key, const std::string& context) {
  issues_.error(map.location, "missing required key '" + key + "' in " + context);
}

std::optional<std::string> Loader::read_string(const YNode* node, const std::string& what) {
  if (!node) return std::nullopt;
  if (!node->is_string()) {
    type_error(*node, what, "a string");
    return std::nullopt;
  }
  return node->scalar;
}

std::optional<int64_t> Loader::read_int(const YNode* node, const std::string& what, int64_t min, int64_t max) {
  if (!node) return std::nullopt;
  if (node->type() != YNode::Type::kInt) {
    type_error(*node, what, "an integer");
    return std::nullopt;
  }
  int64_t v = to_json(*node).as_int();
  if (v < min || v > max) {
    issues_.error(node->location, "'" + what + "' must be between " + std::to_string(min) + " and " +
                                      std::to_string(max) + ", got " + std::to_string(v));
    return std::nullopt;
  }
  return v;
}

std::optional<double> Loader::read_number(const YNode* node, const std::string& what, int64_t min) {
  if (!node) return std::nullopt;
  if (node->type() != YNode::Type::kInt && node->type() != YNode::Type::kFloat) {
    type_error(*node, what, "a number");
    return std::nullopt;
  }
  double v = to_json(*node).as_double();
  if (!(v >= static_cast<double>(min))) {
    issues_.error(node->location, "'" + what + "' must be at least " + std::to_string(min) + ", got " + node->scalar);
    return std::nullopt;
  }
  if (v > 1e9) {
    issues_.error(node->location, "'" + what + "' must be at most 1000000000, got " + node->scalar);
    return std::nullopt;
  }
  return v;
}

std::optional<bool> Loader::read_bool(const YNode* node, const std::string& what) {
  if (!node) return std::nullopt;
  if (node->type() != YNode::Type::kBool) {
    type_error(*node, what, "true or false");
    return std::nullopt;
  }
  return to_json(*node).as_bool();
}

std::optional<int64_t> Loader::read_duration(const YNode* node, const std::string& what) {
  if (!node) return std::nullopt;
  if (!node->is_scalar()) {
    type_error(*node, what, "a duration such as 10s");
    return std::nullopt;
  }
  auto ms = base::parse_duration_ms(node->scalar);
  if (!ms) {
    issues_.error(node->location, "bad duration '" + node->scalar + "' for '" + what +
                                      "' (use a number and a unit: 250ms, 10s, 2m, 1h)");
  }
  return ms;
}

std::optional<std::vector<std::string>> Loader::read_string_list(const YNode* node, const std::string& what) {
  if (!node) return std::nullopt;
  if (!node->is_seq()) {
    type_error(*node, what, "a list of strings");
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (const auto& item : node->items) {
    if (!item.is_string()) {
      type_error(item, what + " item", "a string");
      ok = false;
      continue;
    }
    out.push_back(item.scalar);
  }
  if (!ok) return std::nullopt;
  return out;
}

// Names used in expressions (step ids, input names, loop variables): a letter or '_', then
// letters, digits, '_' or '-', not ending in '-'.
bool Loader::valid_name(const YNode& node, const std::string& name, const std::string& what) {
  bool ok = !name.empty() && name.size() <= 64 && name.back() != '-';
  for (size_t i = 0; ok && i < name.size(); ++i) {
    char c = name[i];
    bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = (c >= '0' && c <= '9') || c == '-';
    ok = letter || (i > 0 && digit);
  }
  if (!ok) {
    issues_.error(node.location, what + " '" + name +
                                     "' must start with a letter or '_' and hold only letters, digits, '_' and '-' "
                                     "(at most 64)");
  }
  return ok;
}

}  // namespace dloop::workflows::detail
