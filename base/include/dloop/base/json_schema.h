// JSON Schema: the subset dloop supports (docs/json-schema.md), used for tool parameters, a
// workflow's output_schema and schema-guided decoding. compile() checks a schema once and turns it
// into a tree of SchemaNode; Schema::validate() checks values against it. A keyword outside the
// subset is an error at compile time (never silently ignored), so every schema that compiles is
// enforced in full. Not a general JSON Schema implementation: no $ref, no allOf/oneOf/not, no
// format. A compiled Schema is immutable and safe to share and use from many threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/status.h"

namespace dloop::base {

// Bits of SchemaNode::types. kNumber admits integers too; kInteger admits integral doubles (1.0).
enum SchemaType : uint8_t {
  kSchemaString = 1 << 0,
  kSchemaInteger = 1 << 1,
  kSchemaNumber = 1 << 2,
  kSchemaBoolean = 1 << 3,
  kSchemaObject = 1 << 4,
  kSchemaArray = 1 << 5,
  kSchemaNull = 1 << 6,
  kSchemaAnyType = 0x7F,
};

// A compiled `pattern` (ECMAScript subset, matched on Unicode code points, linear time). Defined
// in json_schema.cpp; the engine may walk it later to build token masks.
class SchemaPattern;

// One compiled schema object. Absent keywords are empty optionals / empty vectors.
struct SchemaNode {
  using Ptr = std::shared_ptr<const SchemaNode>;
  enum class Additional { kAllow, kForbid, kSchema };

  bool reject_all = false;                      // the `false` schema
  uint8_t types = kSchemaAnyType;               // SchemaType bits allowed by `type`
  std::vector<std::pair<std::string, Ptr>> properties;  // declaration order
  std::vector<std::string> required;
  Additional additional = Additional::kAllow;   // additionalProperties
  Ptr additional_schema;                        // set when additional == kSchema
  std::optional<std::vector<Json>> enum_values;
  std::optional<Json> const_value;
  std::optional<Json> minimum, maximum, exclusive_minimum, exclusive_maximum;  // numbers
  std::optional<uint64_t> min_length, max_length;  // code points
  std::optional<std::string> pattern;
  std::shared_ptr<const SchemaPattern> pattern_matcher;
  Ptr items;
  std::optional<uint64_t> min_items, max_items;
  std::vector<Ptr> any_of;
  std::optional<std::string> title, description;  // annotations
  std::optional<Json> default_value;
  std::optional<std::vector<Json>> examples;
  // x-dloop-grounded (a decoding hint, not checked by validate()): tool-call decoding writes a
  // string or number here only as a span of the conversation (docs/tool-calls.md "Grounded values").
  bool grounded = false;

  // The schema of property `name`, or nullptr when it is not declared in `properties`.
  const SchemaNode* property(std::string_view name) const;
  bool is_required(std::string_view name) const;
  // Whether `value` is valid for this node alone (what Schema::validate checks at its place).
  bool accepts(const Json& value) const;
};

// One validation problem: a JSON pointer into the value ("#", "#/city", "#/items/0") and a reason.
struct SchemaError {
  std::string path;
  std::string message;
  std::string to_string() const { return path + ": " + message; }  // "#/days: expected integer, got string"
};

// `schema` without dloop's decoding hints (x-dloop-grounded), as a model is shown it: no model
// was trained to read them. Walks the schema's structure (properties, items, additionalProperties,
// anyOf), so a property named like a hint stays. A non-object is returned as is.
Json without_decoding_hints(const Json& schema);

class Schema {
 public:
  // The schema `{}`: accepts every value.
  Schema();

  // Checks `schema` against the supported subset and compiles it. Errors (invalid_argument) name
  // the JSON pointer of the offending schema object: "#/properties/city: unsupported keyword
  // 'format'", "#/items: 'minItems' must be a non-negative integer".
  // pattern_supported: false where the schema's user cannot honour `pattern` (tool-call decoding),
  // so that the error for `format` does not suggest it.
  static Result<Schema> compile(const Json& schema, bool pattern_supported = true);

  // ok, or invalid_argument "#/path: reason" for the first problem found (depth-first, in
  // property declaration order).
  Status validate(const Json& value) const;
  // Every problem, up to max_errors; empty when the value is valid.
  std::vector<SchemaError> validate_all(const Json& value, size_t max_errors = 64) const;

  const SchemaNode& root() const { return *root_; }
  const Json& json() const { return json_; }  // the source schema, as given to compile()

 private:
  SchemaNode::Ptr root_;
  Json json_;
};

inline Result<Schema> compile_schema(const Json& schema) { return Schema::compile(schema); }

// True when `value` has one of the SchemaType bits in `types` (an integral double is an integer).
bool schema_type_matches(uint8_t types, const Json& value);
// "string", "integer", "number", "boolean", "object", "array" or "null" (a double is "number").
const char* schema_type_name_of(const Json& value);

// Pattern matching on its own (also used by the tests): compiles an ECMAScript-subset regular
// expression; invalid_argument names the offset and reason for unsupported syntax (back
// references, lookaround, \b) or a pattern that is too large.
Result<std::shared_ptr<const SchemaPattern>> compile_schema_pattern(std::string_view pattern);
// Unanchored search, as JSON Schema's `pattern` requires: true when some substring matches.
bool schema_pattern_search(const SchemaPattern& pattern, std::string_view utf8_text);

}  // namespace dloop::base
