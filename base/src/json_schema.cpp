// JSON Schema subset: compile (keyword checks, JSON-pointer error paths) and validation. The
// pattern engine lives in json_schema_pattern.cpp. See json_schema.h and docs/json-schema.md.
// Pure functions over immutable trees; thread-safe.
#include "dloop/base/json_schema.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "json_schema_pattern.h"

namespace dloop::base {
namespace {

constexpr size_t kMaxSchemaDepth = 64;

constexpr std::array<std::string_view, 22> kKeywords = {
    "type",      "properties", "required",  "enum",      "const",     "minimum",
    "maximum",   "exclusiveMinimum",        "exclusiveMaximum",       "minLength",
    "maxLength", "pattern",    "items",     "minItems",  "maxItems",  "anyOf",
    "additionalProperties",    "description", "title",   "default",   "examples",
    "x-dloop-grounded"};

constexpr std::array<std::pair<std::string_view, uint8_t>, 7> kTypeNames = {{
    {"string", kSchemaString}, {"integer", kSchemaInteger}, {"number", kSchemaNumber},
    {"boolean", kSchemaBoolean}, {"object", kSchemaObject}, {"array", kSchemaArray},
    {"null", kSchemaNull}}};

std::string_view hint_for(std::string_view keyword, bool pattern_supported) {
  if (keyword == "$ref" || keyword == "$defs" || keyword == "definitions") {
    return " (references are not supported: write the schema inline)";
  }
  if (keyword == "oneOf") return " (use anyOf)";
  if (keyword == "allOf") return " (merge the schemas into one)";
  if (keyword == "format") {
    return pattern_supported ? " (use pattern)" : " (nor is pattern: state the expected format in the description)";
  }
  if (keyword == "prefixItems") return " (tuple arrays are not supported)";
  if (keyword == "patternProperties") return " (use additionalProperties with a schema)";
  return "";
}

// RFC 6901 escaping of one reference token.
std::string pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string child_path(const std::string& path, std::string_view key) {
  return path + "/" + pointer_token(key);
}

Status schema_error(const std::string& path, const std::string& message) {
  return invalid_argument(path + ": " + message);
}

// A count keyword: a non-negative integer (an integral double such as 2.0 is accepted).
std::optional<uint64_t> as_count(const Json& v) {
  if (v.is_int()) return v.as_int() >= 0 ? std::optional<uint64_t>(v.as_int()) : std::nullopt;
  if (v.is_double() && v.as_double() >= 0 && v.as_double() < 9.0e15 &&
      std::floor(v.as_double()) == v.as_double()) {
    return static_cast<uint64_t>(v.as_double());
  }
  return std::nullopt;
}

// -1, 0 or 1; both arguments are numbers.
int compare_numbers(const Json& a, const Json& b) {
  if (a.is_int() && b.is_int()) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
  auto to_ld = [](const Json& j) {
    return j.is_int() ? static_cast<long double>(j.as_int()) : static_cast<long double>(j.as_double());
  };
  long double x = to_ld(a), y = to_ld(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

std::string types_to_string(uint8_t types) {
  std::string out;
  for (const auto& [name, bit] : kTypeNames) {
    if ((types & bit) == 0) continue;
    if (!out.empty()) out += " or ";
    out += name;
  }
  return out;
}

// A short rendering of a value for messages.
std::string excerpt(const Json& v, size_t max = 120) {
  std::string s = v.dump();
  if (s.size() > max) s = s.substr(0, max) + "...";
  return s;
}

uint64_t code_points(const std::string& s) {
  uint64_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

class Compiler {
 public:
  explicit Compiler(bool pattern_supported) : pattern_supported_(pattern_supported) {}
  Result<SchemaNode::Ptr> compile(const Json& s, const std::string& path, size_t depth) {
    if (depth > kMaxSchemaDepth) return schema_error(path, "schema nests too deeply");
    auto node = std::make_shared<SchemaNode>();
    if (s.is_bool()) {
      node->reject_all = !s.as_bool();
      return SchemaNode::Ptr(std::move(node));
    }
    if (!s.is_object()) {
      return schema_error(path, "a schema must be an object or a boolean, got " +
                                    std::string(schema_type_name_of(s)));
    }
    for (const auto& [key, value] : s.as_object()) {
      if (std::find(kKeywords.begin(), kKeywords.end(), key) == kKeywords.end()) {
        return schema_error(path, "unsupported keyword '" + key + "'" + std::string(hint_for(key, pattern_supported_)));
      }
      DLOOP_RETURN_IF_ERROR(keyword(*node, key, value, path, depth));
    }
    DLOOP_RETURN_IF_ERROR(check_bounds(*node, path));
    return SchemaNode::Ptr(std::move(node));
  }

 private:
  Status keyword(SchemaNode& n, const std::string& key, const Json& v, const std::string& path,
                 size_t depth) {
    auto bad = [&](const std::string& what) { return schema_error(path, "'" + key + "' must be " + what); };
    if (key == "type") return parse_type(n, v, path);
    if (key == "properties") {
      if (!v.is_object()) return bad("an object of schemas");
      for (const auto& [name, sub] : v.as_object()) {
        DLOOP_ASSIGN_OR_RETURN(auto child, compile(sub, child_path(child_path(path, key), name), depth + 1));
        n.properties.emplace_back(name, std::move(child));
      }
      return Status();
    }
    if (key == "required") {
      if (!v.is_array()) return bad("an array of property names");
      for (const Json& r : v.as_array()) {
        if (!r.is_string()) return bad("an array of property names");
        if (n.is_required(r.as_string())) return schema_error(path, "'required' lists '" + r.as_string() + "' twice");
        n.required.push_back(r.as_string());
      }
      return Status();
    }
    if (key == "enum") {
      if (!v.is_array() || v.size() == 0) return bad("a non-empty array");
      n.enum_values = v.as_array();
      return Status();
    }
    if (key == "const") { n.const_value = v; return Status(); }
    if (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" || key == "exclusiveMaximum") {
      if (!v.is_number()) {
        return bad(v.is_bool() ? "a number (the draft-04 boolean form is not supported)" : "a number");
      }
      (key == "minimum" ? n.minimum : key == "maximum" ? n.maximum
       : key == "exclusiveMinimum" ? n.exclusive_minimum : n.exclusive_maximum) = v;
      return Status();
    }
    if (key == "minLength" || key == "maxLength" || key == "minItems" || key == "maxItems") {
      auto count = as_count(v);
      if (!count) return bad("a non-negative integer");
      (key == "minLength" ? n.min_length : key == "maxLength" ? n.max_length
       : key == "minItems" ? n.min_items : n.max_items) = *count;
      return Status();
    }
    if (key == "pattern") {
      if (!v.is_string()) return bad("a string");
      auto matcher = compile_schema_pattern(v.as_string());
      if (!matcher.ok()) {
        return schema_error(path, "invalid pattern '" + v.as_string() + "': " + matcher.status().message());
      }
      n.pattern = v.as_string();
      n.pattern_matcher = std::move(*matcher);
      return Status();
    }
    if (key == "items") {
      if (v.is_array()) return bad("a schema (the array form for tuples is not supported)");
      DLOOP_ASSIGN_OR_RETURN(n.items, compile(v, child_path(path, key), depth + 1));
      return Status();
    }
    if (key == "anyOf") {
      if (!v.is_array() || v.size() == 0) return bad("a non-empty array of schemas");
      for (size_t i = 0; i < v.size(); ++i) {
        DLOOP_ASSIGN_OR_RETURN(auto branch,
                               compile(v.as_array()[i], child_path(child_path(path, key), std::to_string(i)), depth + 1));
        n.any_of.push_back(std::move(branch));
      }
      return Status();
    }
    if (key == "additionalProperties") {
      if (v.is_bool()) {
        n.additional = v.as_bool() ? SchemaNode::Additional::kAllow : SchemaNode::Additional::kForbid;
        return Status();
      }
      if (!v.is_object()) return bad("a boolean or a schema");
      n.additional = SchemaNode::Additional::kSchema;
      DLOOP_ASSIGN_OR_RETURN(n.additional_schema, compile(v, child_path(path, key), depth + 1));
      return Status();
    }
    if (key == "title" || key == "description") {
      if (!v.is_string()) return bad("a string");
      (key == "title" ? n.title : n.description) = v.as_string();
      return Status();
    }
    if (key == "default") { n.default_value = v; return Status(); }
    if (key == "x-dloop-grounded") {
      if (!v.is_bool()) return bad("a boolean");
      n.grounded = v.as_bool();
      return Status();
    }
    if (key == "examples") {
      if (!v.is_array()) return bad("an array");
      n.examples = v.as_array();
      return Status();
    }
    return schema_error(path, "unsupported keyword '" + key + "'");  // unreachable: kKeywords
  }

  static Status parse_type(SchemaNode& n, const Json& v, const std::string& path) {
    auto one = [&](const Json& t) -> Result<uint8_t> {
      if (t.is_string()) {
        for (const auto& [name, bit] : kTypeNames) {
          if (t.as_string() == name) return bit;
        }
        return schema_error(path, "unknown type '" + t.as_string() +
                                      "' (expected string, integer, number, boolean, object, array or null)");
      }
      return schema_error(path, "'type' must be a type name or an array of type names");
    };
    if (v.is_array()) {
      if (v.size() == 0) return schema_error(path, "'type' must not be an empty array");
      uint8_t types = 0;
      for (const Json& t : v.as_array()) {
        DLOOP_ASSIGN_OR_RETURN(uint8_t bit, one(t));
        if (types & bit) return schema_error(path, "'type' lists '" + t.as_string() + "' twice");
        types |= bit;
      }
      n.types = types;
      return Status();
    }
    DLOOP_ASSIGN_OR_RETURN(n.types, one(v));
    return Status();
  }

  static Status check_bounds(const SchemaNode& n, const std::string& path) {
    auto order = [&](const auto& lo, const auto& hi, const char* lo_name, const char* hi_name) -> Status {
      if (lo && hi && *lo > *hi) {
        return schema_error(path, std::string(lo_name) + " " + std::to_string(*lo) + " is greater than " +
                                      hi_name + " " + std::to_string(*hi));
      }
      return Status();
    };
    DLOOP_RETURN_IF_ERROR(order(n.min_length, n.max_length, "minLength", "maxLength"));
    DLOOP_RETURN_IF_ERROR(order(n.min_items, n.max_items, "minItems", "maxItems"));
    if (n.minimum && n.maximum && compare_numbers(*n.minimum, *n.maximum) > 0) {
      return schema_error(path, "minimum " + n.minimum->dump() + " is greater than maximum " + n.maximum->dump());
    }
    return Status();
  }

  bool pattern_supported_;
};

class Validator {
 public:
  Validator(std::vector<SchemaError>& errors, size_t max_errors) : errors_(errors), max_(max_errors) {}

  bool full() const { return errors_.size() >= max_; }

  void check(const SchemaNode& n, const Json& v, const std::string& path) {
    if (full()) return;
    if (n.reject_all) return fail(path, "no value is allowed here (the schema is false)");
    if (!schema_type_matches(n.types, v)) {
      return fail(path, "expected " + types_to_string(n.types) + ", got " + schema_type_name_of(v));
    }
    if (n.const_value && !(*n.const_value == v)) return fail(path, "must be " + excerpt(*n.const_value));
    if (n.enum_values &&
        std::find(n.enum_values->begin(), n.enum_values->end(), v) == n.enum_values->end()) {
      return fail(path, excerpt(v, 60) + " is not one of " + excerpt(Json::array(*n.enum_values), 200));
    }
    if (v.is_number()) check_number(n, v, path);
    if (v.is_string()) check_string(n, v.as_string(), path);
    if (v.is_array()) check_array(n, v, path);
    if (v.is_object()) check_object(n, v, path);
    if (!n.any_of.empty()) check_any_of(n, v, path);
  }

 private:
  void fail(const std::string& path, std::string message) {
    if (!full()) errors_.push_back({path, std::move(message)});
  }

  void check_number(const SchemaNode& n, const Json& v, const std::string& path) {
    if (n.minimum && compare_numbers(v, *n.minimum) < 0) fail(path, "must be >= " + n.minimum->dump());
    if (n.maximum && compare_numbers(v, *n.maximum) > 0) fail(path, "must be <= " + n.maximum->dump());
    if (n.exclusive_minimum && compare_numbers(v, *n.exclusive_minimum) <= 0) {
      fail(path, "must be > " + n.exclusive_minimum->dump());
    }
    if (n.exclusive_maximum && compare_numbers(v, *n.exclusive_maximum) >= 0) {
      fail(path, "must be < " + n.exclusive_maximum->dump());
    }
  }

  void check_string(const SchemaNode& n, const std::string& s, const std::string& path) {
    if (n.min_length || n.max_length) {
      uint64_t len = code_points(s);
      if (n.min_length && len < *n.min_length) {
        fail(path, "must be at least " + std::to_string(*n.min_length) + " characters long (got " +
                       std::to_string(len) + ")");
      }
      if (n.max_length && len > *n.max_length) {
        fail(path, "must be at most " + std::to_string(*n.max_length) + " characters long (got " +
                       std::to_string(len) + ")");
      }
    }
    if (n.pattern_matcher && !schema_pattern_search(*n.pattern_matcher, s)) {
      fail(path, "does not match the pattern " + json_quote(*n.pattern));
    }
  }

  void check_array(const SchemaNode& n, const Json& v, const std::string& path) {
    size_t size = v.size();
    if (n.min_items && size < *n.min_items) {
      fail(path, "must have at least " + std::to_string(*n.min_items) + " items (got " + std::to_string(size) + ")");
    }
    if (n.max_items && size > *n.max_items) {
      fail(path, "must have at most " + std::to_string(*n.max_items) + " items (got " + std::to_string(size) + ")");
    }
    if (!n.items) return;
    for (size_t i = 0; i < size && !full(); ++i) check(*n.items, v.as_array()[i], child_path(path, std::to_string(i)));
  }

  void check_object(const SchemaNode& n, const Json& v, const std::string& path) {
    for (const std::string& name : n.required) {
      if (v.find(name) == nullptr) fail(path, "missing required property '" + name + "'");
    }
    for (const auto& [name, sub] : n.properties) {
      if (const Json* member = v.find(name)) check(*sub, *member, child_path(path, name));
    }
    if (n.additional == SchemaNode::Additional::kAllow) return;
    for (const auto& [name, member] : v.as_object()) {
      if (full()) return;
      if (n.property(name) != nullptr) continue;
      if (n.additional == SchemaNode::Additional::kSchema) {
        check(*n.additional_schema, member, child_path(path, name));
        continue;
      }
      std::string allowed;
      for (const auto& p : n.properties) allowed += (allowed.empty() ? "" : ", ") + p.first;
      fail(child_path(path, name),
           "unexpected property" + (allowed.empty() ? std::string(" (no properties are allowed)")
                                                    : " (allowed: " + allowed + ")"));
    }
  }

  void check_any_of(const SchemaNode& n, const Json& v, const std::string& path) {
    std::string reasons;
    for (size_t i = 0; i < n.any_of.size(); ++i) {
      std::vector<SchemaError> branch_errors;
      Validator branch(branch_errors, 1);
      branch.check(*n.any_of[i], v, path);
      if (branch_errors.empty()) return;
      if (i > 0) reasons += "; ";
      // Appended piecewise: GCC 12 warns (-Wrestrict, falsely) on "[" + std::to_string(i).
      reasons += '[';
      reasons += std::to_string(i);
      reasons += "] ";
      reasons += branch_errors[0].to_string();
    }
    fail(path, "matches none of the anyOf alternatives: " + reasons);
  }

  std::vector<SchemaError>& errors_;
  size_t max_;
};

}  // namespace

const SchemaNode* SchemaNode::property(std::string_view name) const {
  for (const auto& [key, node] : properties) {
    if (key == name) return node.get();
  }
  return nullptr;
}

bool SchemaNode::is_required(std::string_view name) const {
  return std::find(required.begin(), required.end(), name) != required.end();
}

bool schema_type_matches(uint8_t types, const Json& v) {
  switch (v.type()) {
    case Json::Type::kNull: return types & kSchemaNull;
    case Json::Type::kBool: return types & kSchemaBoolean;
    case Json::Type::kInt: return types & (kSchemaInteger | kSchemaNumber);
    case Json::Type::kDouble: {
      if (types & kSchemaNumber) return true;
      double d = v.as_double();
      return (types & kSchemaInteger) && std::isfinite(d) && std::floor(d) == d;
    }
    case Json::Type::kString: return types & kSchemaString;
    case Json::Type::kArray: return types & kSchemaArray;
    case Json::Type::kObject: return types & kSchemaObject;
  }
  return false;
}

const char* schema_type_name_of(const Json& v) {
  switch (v.type()) {
    case Json::Type::kNull: return "null";
    case Json::Type::kBool: return "boolean";
    case Json::Type::kInt: return "integer";
    case Json::Type::kDouble: return "number";
    case Json::Type::kString: return "string";
    case Json::Type::kArray: return "array";
    case Json::Type::kObject: return "object";
  }
  return "unknown";
}

Schema::Schema() : root_(std::make_shared<SchemaNode>()), json_(Json::object()) {}

Json without_decoding_hints(const Json& schema) {
  if (!schema.is_object()) return schema;
  Json out = Json::object();
  for (const auto& [key, value] : schema.as_object()) {
    if (key == "x-dloop-grounded") continue;
    if ((key == "items" || key == "additionalProperties") && value.is_object()) {
      out.set(key, without_decoding_hints(value));
    } else if (key == "anyOf" && value.is_array()) {
      Json alts = Json::array();
      for (const Json& a : value.as_array()) alts.push_back(without_decoding_hints(a));
      out.set(key, std::move(alts));
    } else if (key == "properties" && value.is_object()) {
      Json props = Json::object();
      for (const auto& [name, sub] : value.as_object()) props.set(name, without_decoding_hints(sub));
      out.set(key, std::move(props));
    } else {
      out.set(key, value);
    }
  }
  return out;
}

Result<Schema> Schema::compile(const Json& schema, bool pattern_supported) {
  DLOOP_ASSIGN_OR_RETURN(auto root, Compiler(pattern_supported).compile(schema, "#", 0));
  Schema out;
  out.root_ = std::move(root);
  out.json_ = schema;
  return out;
}

bool SchemaNode::accepts(const Json& value) const {
  std::vector<SchemaError> errors;
  Validator(errors, 1).check(*this, value, "#");
  return errors.empty();
}

Status Schema::validate(const Json& value) const {
  std::vector<SchemaError> errors;
  Validator(errors, 1).check(*root_, value, "#");
  if (errors.empty()) return Status();
  return invalid_argument(errors[0].to_string());
}

std::vector<SchemaError> Schema::validate_all(const Json& value, size_t max_errors) const {
  std::vector<SchemaError> errors;
  if (max_errors == 0) return errors;
  Validator(errors, max_errors).check(*root_, value, "#");
  return errors;
}

}  // namespace dloop::base
