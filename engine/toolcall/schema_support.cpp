// Schema helpers for the infilling decoder; see schema_support.h.
#include "schema_support.h"

#include <cmath>

namespace dloop::engine::toolcall {

using base::Json;
using base::SchemaNode;

namespace {

bool has_value_constraints(const SchemaNode& n) {
  return n.types != base::kSchemaAnyType || !n.properties.empty() || !n.required.empty() ||
         n.additional != SchemaNode::Additional::kAllow || n.enum_values || n.const_value || n.minimum ||
         n.maximum || n.exclusive_minimum || n.exclusive_maximum || n.min_length || n.max_length || n.pattern ||
         n.items || n.min_items || n.max_items;
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<uint8_t>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace

int count_types(uint8_t t) {
  if ((t & base::kSchemaNumber) && (t & base::kSchemaInteger)) t = static_cast<uint8_t>(t & ~base::kSchemaInteger);
  int n = 0;
  for (int b = 0; b < 7; ++b) n += (t >> b) & 1;
  return n;
}

base::Status check_decodable(const SchemaNode& n, const std::string& path, int depth) {
  using base::invalid_argument;
  if (depth > kMaxNesting) return invalid_argument(path + ": nested deeper than " + std::to_string(kMaxNesting) + " levels");
  if (n.reject_all) return invalid_argument(path + ": the schema 'false' admits no value");
  if (n.pattern) return invalid_argument(path + ": keyword 'pattern' is not supported by tool-call decoding");
  if (n.enum_values && n.enum_values->size() > kMaxEnumValues) {
    return invalid_argument(path + ": enum has " + std::to_string(n.enum_values->size()) + " values (at most " +
                            std::to_string(kMaxEnumValues) + " are supported by tool-call decoding)");
  }
  if (!n.any_of.empty()) {
    if (has_value_constraints(n)) {
      return invalid_argument(path + ": 'anyOf' next to other constraints is not supported by tool-call decoding "
                              "(move them into each alternative)");
    }
    for (size_t i = 0; i < n.any_of.size(); ++i) {
      DLOOP_RETURN_IF_ERROR(check_decodable(*n.any_of[i], path + "/anyOf/" + std::to_string(i), depth + 1));
    }
    return base::Status();
  }
  if (n.enum_values || n.const_value) {
    if (literal_candidates(n, n.types).empty()) return invalid_argument(path + ": no enum/const value satisfies the schema");
    return base::Status();
  }
  const uint8_t t = n.types;
  if (t == 0) return invalid_argument(path + ": no type admitted");
  if ((t & base::kSchemaInteger) && !(t & base::kSchemaNumber) && !number_range(n, true)) {
    return invalid_argument(path + ": no integer lies within the bounds");
  }
  if ((t & base::kSchemaNumber) && !number_range(n, false)) return invalid_argument(path + ": the bounds admit no number");
  if ((t & base::kSchemaString) && n.min_length && n.max_length && *n.min_length > *n.max_length) {
    return invalid_argument(path + ": minLength > maxLength");
  }
  if ((t & base::kSchemaString) && n.min_length && *n.min_length > 4096) {
    return invalid_argument(path + ": minLength above 4096 is not supported by tool-call decoding");
  }
  if (t & base::kSchemaObject) {
    for (const std::string& r : n.required) {
      if (!n.property(r) && n.additional == SchemaNode::Additional::kForbid) {
        return invalid_argument(path + ": required property '" + r + "' is neither declared nor allowed");
      }
    }
    for (const auto& [name, child] : n.properties) {
      DLOOP_RETURN_IF_ERROR(check_decodable(*child, path + "/properties/" + name, depth + 1));
    }
    if (n.additional == SchemaNode::Additional::kSchema) {
      for (const std::string& r : n.required) {
        if (!n.property(r)) DLOOP_RETURN_IF_ERROR(check_decodable(*n.additional_schema, path + "/additionalProperties", depth + 1));
      }
    }
  }
  if (t & base::kSchemaArray) {
    if (n.min_items && *n.min_items > 64) return invalid_argument(path + ": minItems above 64 is not supported by tool-call decoding");
    if (n.items && (n.min_items.value_or(0) > 0 || true)) {
      DLOOP_RETURN_IF_ERROR(check_decodable(*n.items, path + "/items", depth + 1));
    }
  }
  return base::Status();
}

std::optional<NumberRange> number_range(const SchemaNode& n, bool integer) {
  NumberRange r;
  constexpr double kIntLimit = 9.0e15;  // integers stay exact in a double
  if (integer) { r.lo = -kIntLimit; r.hi = kIntLimit; }
  if (n.minimum) r.lo = std::max(r.lo, n.minimum->as_double());
  if (n.maximum) r.hi = std::min(r.hi, n.maximum->as_double());
  if (n.exclusive_minimum) {
    const double e = n.exclusive_minimum->as_double();
    const double lo = integer ? std::floor(e) + 1 : std::nextafter(e, INFINITY);
    r.lo = std::max(r.lo, lo);
  }
  if (n.exclusive_maximum) {
    const double e = n.exclusive_maximum->as_double();
    const double hi = integer ? std::ceil(e) - 1 : std::nextafter(e, -INFINITY);
    r.hi = std::min(r.hi, hi);
  }
  if (integer) { r.lo = std::ceil(r.lo); r.hi = std::floor(r.hi); }
  if (!(r.lo <= r.hi)) return std::nullopt;
  return r;
}

std::string clamp_number_text(const std::string& text, const NumberRange& range, bool integer) {
  double v = std::strtod(text.c_str(), nullptr);
  if (std::isnan(v)) v = 0;
  const bool clamped = v < range.lo || v > range.hi;
  v = std::min(std::max(v, range.lo), range.hi);
  if (integer) return std::to_string(static_cast<int64_t>(v));
  if (!clamped) return text;
  if (v == std::floor(v) && std::fabs(v) < 9.0e15) return std::to_string(static_cast<int64_t>(v));
  return base::format_double(v);
}

bool literal_fits(const SchemaNode& n, uint8_t types, const Json& v) {
  if (!base::schema_type_matches(types, v)) return false;
  if (n.enum_values) {
    bool found = false;
    for (const Json& e : *n.enum_values) found = found || e == v;
    if (!found) return false;
  }
  if (n.const_value && !(*n.const_value == v)) return false;
  if (v.is_number()) {
    const bool integer = (types & base::kSchemaInteger) && !(types & base::kSchemaNumber);
    auto r = number_range(n, integer && v.is_int());
    if (!r) return false;
    const double d = v.as_double();
    if (d < r->lo || d > r->hi) return false;
  }
  if (v.is_string()) {
    const size_t cp = code_points(v.as_string());
    if (n.min_length && cp < *n.min_length) return false;
    if (n.max_length && cp > *n.max_length) return false;
  }
  if (v.is_array()) {
    if (n.min_items && v.size() < *n.min_items) return false;
    if (n.max_items && v.size() > *n.max_items) return false;
  }
  return true;
}

std::vector<std::string> literal_candidates(const SchemaNode& n, uint8_t types) {
  std::vector<std::string> out;
  std::vector<Json> values;
  if (n.const_value) {
    values.push_back(*n.const_value);
  } else if (n.enum_values) {
    values = *n.enum_values;
  } else if (count_types(types) == 1 && (types & base::kSchemaBoolean)) {
    values = {Json(true), Json(false)};
  } else {
    return out;
  }
  for (const Json& v : values) {
    if (!literal_fits(n, types, v)) continue;
    // Nested literal values must also satisfy nested schemas; a literal with structure is kept only
    // when the node has none (the schema validator has the last word anyway).
    if ((v.is_object() && !n.properties.empty()) || (v.is_array() && n.items)) continue;
    std::string text = v.dump(Json::Style::kPython);
    bool dup = false;
    for (const std::string& o : out) dup = dup || o == text;
    if (!dup) out.push_back(std::move(text));
  }
  return out;
}

std::vector<std::string> start_texts(const SchemaNode& n, uint8_t types) {
  auto lits = literal_candidates(n, types);
  if (!lits.empty() || n.enum_values || n.const_value) return lits;
  std::vector<std::string> out;
  if (types & base::kSchemaString) out.push_back("\"");
  if (types & (base::kSchemaNumber | base::kSchemaInteger)) {
    for (char d = '0'; d <= '9'; ++d) out.push_back(std::string(1, d));
    out.push_back("-");
  }
  if (types & base::kSchemaBoolean) { out.push_back("true"); out.push_back("false"); }
  if (types & base::kSchemaNull) out.push_back("null");
  if (types & base::kSchemaObject) out.push_back("{");
  if (types & base::kSchemaArray) out.push_back("[");
  return out;
}

}  // namespace dloop::engine::toolcall
