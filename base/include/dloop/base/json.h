// Json: an owned JSON value (null, bool, integer, double, string, array, object) with object keys
// kept in insertion order, parsed with simdjson and written by a small writer.
// Used for tool arguments, JSON Schemas, events and HTTP bodies. Not thread-safe to mutate; safe
// to read from many threads. Parse errors name the byte offset (and line:column) of the problem.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dloop/base/status.h"

namespace dloop::base {

class Json {
 public:
  enum class Type { kNull, kBool, kInt, kDouble, kString, kArray, kObject };
  using Array = std::vector<Json>;
  using Member = std::pair<std::string, Json>;
  using Object = std::vector<Member>;

  Json() = default;  // null
  Json(std::nullptr_t) {}
  Json(bool b) : type_(Type::kBool), bool_(b) {}
  Json(int v) : type_(Type::kInt), int_(v) {}
  Json(int64_t v) : type_(Type::kInt), int_(v) {}
  Json(uint64_t v) : type_(Type::kInt), int_(static_cast<int64_t>(v)) {}
  Json(double v) : type_(Type::kDouble), double_(v) {}
  Json(const char* s) : type_(Type::kString), string_(s) {}
  Json(std::string s) : type_(Type::kString), string_(std::move(s)) {}
  Json(std::string_view s) : type_(Type::kString), string_(s) {}
  static Json array(Array items = {});
  static Json object(Object members = {});

  // Parses one JSON document (RFC 8259, UTF-8). Errors: invalid_argument naming the byte offset,
  // line and column, or resource_exhausted past max_depth nesting.
  static Result<Json> parse(std::string_view text, size_t max_depth = 256);

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_bool() const { return type_ == Type::kBool; }
  bool is_int() const { return type_ == Type::kInt; }
  bool is_double() const { return type_ == Type::kDouble; }
  bool is_number() const { return type_ == Type::kInt || type_ == Type::kDouble; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }

  // Typed access; calling the wrong one is a bug (asserts). Check the type first.
  bool as_bool() const;
  int64_t as_int() const;
  double as_double() const;  // ints convert
  const std::string& as_string() const;
  const Array& as_array() const;
  Array& as_array();
  const Object& as_object() const;
  Object& as_object();

  // Object helpers: nullptr when absent or when this is not an object.
  const Json* find(std::string_view key) const;
  Json* find(std::string_view key);
  // Sets (replacing an existing key in place) and returns the stored value.
  Json& set(std::string key, Json value);
  // Array helper.
  void push_back(Json value);
  size_t size() const;  // array or object element count; 0 otherwise

  enum class Style {
    kCompact,  // {"a":1,"b":[1,2]}
    kPython,   // {"a": 1, "b": [1, 2]}: Python's json.dumps default, the model's tool-call format
    kPretty,   // two-space indent
  };
  std::string dump(Style style = Style::kCompact) const;

  bool operator==(const Json& other) const;
  bool operator!=(const Json& other) const { return !(*this == other); }

 private:
  void dump_to(std::string& out, Style style, int indent) const;

  Type type_ = Type::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  std::shared_ptr<Array> array_;    // shared_ptr keeps Json cheap to move; copies deep-copy
  std::shared_ptr<Object> object_;

 public:
  Json(const Json& other);
  Json& operator=(const Json& other);
  Json(Json&&) noexcept = default;
  Json& operator=(Json&&) noexcept = default;
  ~Json() = default;
};

// Appends s to out as a JSON string literal (quotes, escapes; non-ASCII UTF-8 kept as is).
void json_escape_to(std::string& out, std::string_view s);
std::string json_quote(std::string_view s);
// Python repr() of a double (shortest round-trip digits; "1.0", "1e-05", "1e+16").
std::string format_double(double v);
// Locates the first syntax error in text: byte offset, line, column and a reason ("nesting too
// deep" past max_depth levels). An empty reason means text is syntactically valid JSON.
struct JsonErrorPlace {
  size_t offset = 0;
  size_t line = 1;
  size_t column = 1;
  std::string reason;
};
JsonErrorPlace locate_json_error(std::string_view text, size_t max_depth = 10000);

}  // namespace dloop::base
