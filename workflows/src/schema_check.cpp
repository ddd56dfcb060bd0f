// A structural check of the JSON Schemas in a workflow file (output_schema, tool parameters):
// every keyword must be one of the JSON Schema 2020-12 subset dloop enforces, with a value of the
// right shape; types must be JSON types; `required` names must be defined properties. It does not validate instances and
// does not resolve $ref. Unknown keywords are errors (with did-you-mean) because a typo such as
// `proprties` would otherwise silently disable the constraint.
#include <algorithm>

#include "dloop/base/json_schema.h"
#include "dloop/base/strings.h"
#include "loader.h"

namespace dloop::workflows::detail {
namespace {

enum class Shape { kString, kSchema, kSchemaMap, kSchemaList, kNumber, kCount, kAny, kList, kStringList, kType, kBool };

struct Keyword {
  const char* name;
  Shape shape;
};

// The subset of JSON Schema 2020-12 that dloop enforces everywhere (tool arguments, output
// schemas, schema-guided decoding); base's schema compiler accepts the same keywords.
const Keyword kKeywords[] = {
    {"type", Shape::kType}, {"properties", Shape::kSchemaMap}, {"required", Shape::kStringList},
    {"enum", Shape::kList}, {"const", Shape::kAny}, {"items", Shape::kSchema},
    {"additionalProperties", Shape::kSchema}, {"anyOf", Shape::kSchemaList},
    {"minimum", Shape::kNumber}, {"maximum", Shape::kNumber}, {"exclusiveMinimum", Shape::kNumber},
    {"exclusiveMaximum", Shape::kNumber}, {"minLength", Shape::kCount}, {"maxLength", Shape::kCount},
    {"pattern", Shape::kString}, {"minItems", Shape::kCount}, {"maxItems", Shape::kCount},
    {"description", Shape::kString}, {"title", Shape::kString}, {"default", Shape::kAny}, {"examples", Shape::kList},
    {"x-dloop-grounded", Shape::kBool},  // a decoding hint (docs/tool-calls.md "Grounded values")
};

// Standard keywords outside the subset, with what to write instead.
const char* unsupported_hint(const std::string& key) {
  if (key == "$ref" || key == "$defs" || key == "definitions") return "references are not supported: write the schema inline";
  if (key == "oneOf") return "use anyOf";
  if (key == "allOf") return "merge the schemas into one";
  if (key == "format") return "use pattern";
  if (key == "prefixItems") return "tuple arrays are not supported";
  if (key == "patternProperties") return "use additionalProperties with a schema";
  for (const char* k : {"not", "if", "then", "else", "multipleOf", "uniqueItems", "minProperties", "maxProperties",
                        "contains", "minContains", "maxContains", "propertyNames", "dependentRequired",
                        "dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "$schema", "$id",
                        "$comment", "$anchor", "readOnly", "writeOnly", "deprecated", "contentMediaType",
                        "contentEncoding"}) {
    if (key == k) return "dloop does not enforce it";
  }
  return nullptr;
}

const std::vector<std::string> kTypes = {"string", "number", "integer", "boolean", "object", "array", "null"};
constexpr int kMaxSchemaDepth = 32;

std::vector<std::string> keyword_names() {
  std::vector<std::string> out;
  for (const auto& k : kKeywords) out.emplace_back(k.name);
  return out;
}

}  // namespace

namespace {

// The YAML node a JSON pointer ("#/properties/a/items") names inside a schema, or nullptr.
const YNode* follow_pointer(const YNode& root, const std::string& pointer) {
  const YNode* at = &root;
  if (pointer.empty() || pointer[0] != '#') return nullptr;
  for (const auto& raw : base::split(pointer.substr(1), '/')) {
    if (raw.empty()) continue;
    std::string token;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size()) token += raw[++i] == '1' ? '/' : '~';
      else token += raw[i];
    }
    const YNode* next = nullptr;
    if (at->is_map()) {
      for (const auto& [k, v] : at->members) {
        if (k.scalar == token) next = &v;
      }
    } else if (at->is_seq() && !token.empty() && token.find_first_not_of("0123456789") == std::string::npos &&
               token.size() < 9 && std::stoul(token) < at->items.size()) {
      next = &at->items[std::stoul(token)];
    }
    if (!next) return nullptr;
    at = next;
  }
  return at;
}

}  // namespace

// The rules the structural check does not cover (bounds, duplicates, pattern syntax) come from
// compiling the schema exactly as the runtime will; its JSON pointer is mapped back to the file.
void Loader::check_schema_compiles(const YNode& node, const std::string& what) {
  auto compiled = base::Schema::compile(to_json(node));
  if (compiled.ok()) return;
  const std::string message = compiled.status().message();
  const size_t colon = message.find(": ");
  const std::string pointer = colon == std::string::npos ? "#" : message.substr(0, colon);
  const std::string reason = colon == std::string::npos ? message : message.substr(colon + 2);
  const YNode* at = follow_pointer(node, pointer);
  if (!at) at = &node;
  // Point at the keyword the reason names first ("minimum 3 is greater...", "'required' lists...").
  std::string word = reason.substr(0, reason.find(' '));
  if (word.size() > 2 && word.front() == '\'' && word.back() == '\'') word = word.substr(1, word.size() - 2);
  if (reason.rfind("invalid pattern", 0) == 0) word = "pattern";
  if (const YNode* keyword = find(*at, word)) at = keyword;
  issues_.error(at->location, "invalid JSON Schema in '" + what + "': " + reason);
}

void Loader::check_schema(const YNode& node, const std::string& what, int depth) {
  if (depth > kMaxSchemaDepth) {
    issues_.error(node.location, "the JSON Schema in '" + what + "' nests too deeply");
    return;
  }
  if (node.type() == YNode::Type::kBool && depth > 0) return;  // true / false schemas
  if (!node.is_map()) {
    type_error(node, what, depth > 0 ? "a JSON Schema (a mapping or true/false)" : "a JSON Schema mapping");
    return;
  }
  static const std::vector<std::string> names = keyword_names();
  for (const auto& [key, value] : node.members) {
    if (std::find(names.begin(), names.end(), key.scalar) == names.end()) {
      if (const char* hint = unsupported_hint(key.scalar)) {
        issues_.error(key.location, "JSON Schema keyword '" + key.scalar + "' is not supported (" + hint + ")");
        continue;
      }
      std::string msg = "unknown JSON Schema keyword '" + key.scalar + "' in " + what;
      if (auto close = closest_name(key.scalar, names)) msg += " (did you mean '" + *close + "'?)";
      issues_.error(key.location, msg);
      continue;
    }
    check_schema_keyword(key.scalar, value, depth);
  }
  const YNode* props = find(node, "properties");
  const YNode* required = find(node, "required");
  if (props && props->is_map() && required && required->is_seq()) {
    for (const auto& r : required->items) {
      if (r.is_string() && !find(*props, r.scalar)) {
        issues_.error(r.location, "required property '" + r.scalar + "' is not defined in properties");
      }
    }
  }
}

void Loader::check_schema_keyword(const std::string& key, const YNode& value, int depth) {
  Shape shape = Shape::kAny;
  for (const auto& k : kKeywords) {
    if (key == k.name) shape = k.shape;
  }
  switch (shape) {
    case Shape::kString: read_string(&value, key); break;
    case Shape::kCount: read_int(&value, key, 0, INT32_MAX); break;
    case Shape::kAny: break;
    case Shape::kNumber:
      if (value.type() != YNode::Type::kInt && value.type() != YNode::Type::kFloat) type_error(value, key, "a number");
      break;
    case Shape::kSchema:
      if (key == "items" && value.is_seq()) {
        issues_.error(value.location, "'items' is one schema (tuple arrays are not supported)");
      } else {
        check_schema(value, key, depth + 1);
      }
      break;
    case Shape::kSchemaMap:
      if (expect_map(value, key)) {
        for (const auto& [name, sub] : value.members) check_schema(sub, key + "." + name.scalar, depth + 1);
      }
      break;
    case Shape::kSchemaList:
      if (!expect_list(value, key)) break;
      if (value.items.empty()) issues_.error(value.location, "'" + key + "' must list at least one schema");
      for (const auto& sub : value.items) check_schema(sub, key + " item", depth + 1);
      break;
    case Shape::kList:
      if (expect_list(value, key) && key == "enum" && value.items.empty()) {
        issues_.error(value.location, "'enum' must list at least one value");
      }
      break;
    case Shape::kStringList: read_string_list(&value, key); break;
    case Shape::kBool: read_bool(&value, key); break;
    case Shape::kType: {
      std::vector<const YNode*> types;
      if (value.is_seq()) {
        if (value.items.empty()) issues_.error(value.location, "'type' must list at least one type");
        for (const auto& t : value.items) types.push_back(&t);
      } else {
        types.push_back(&value);
      }
      for (const YNode* t : types) {
        auto s = read_string(t, "type");
        if (!s || std::find(kTypes.begin(), kTypes.end(), *s) != kTypes.end()) continue;
        std::string msg = "unknown JSON Schema type '" + *s + "'";
        if (auto close = closest_name(*s, kTypes)) msg += " (did you mean '" + *close + "'?)";
        issues_.error(t->location, msg + "; types: string, number, integer, boolean, object, array, null");
      }
      break;
    }
  }
}

}  // namespace dloop::workflows::detail
