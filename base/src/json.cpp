// Json value model and parsing through simdjson's DOM; see json.h.
#include "dloop/base/json.h"

#include <simdjson.h>

#include <cmath>

namespace dloop::base {
namespace {

// Debian's simdjson 3.0.1 DOM parser miscompiles at -O2 (null dereference in inlined code), so
// the On-Demand API is used; it visits every value, which validates the whole document.
Result<Json> convert(simdjson::ondemand::value v, size_t depth, size_t max_depth) {
  if (depth > max_depth) {
    return resource_exhausted("JSON nesting deeper than " + std::to_string(max_depth) + " levels");
  }
  simdjson::ondemand::json_type type;
  if (auto err = v.type().get(type)) return invalid_argument(simdjson::error_message(err));
  switch (type) {
    case simdjson::ondemand::json_type::null: {
      bool is_null = false;
      if (v.is_null().get(is_null) || !is_null) return invalid_argument("invalid literal");
      return Json();
    }
    case simdjson::ondemand::json_type::boolean: {
      bool b;
      if (auto err = v.get_bool().get(b)) return invalid_argument(simdjson::error_message(err));
      return Json(b);
    }
    case simdjson::ondemand::json_type::number: {
      simdjson::ondemand::number n;
      if (auto err = v.get_number().get(n)) return invalid_argument(simdjson::error_message(err));
      switch (n.get_number_type()) {
        case simdjson::ondemand::number_type::signed_integer: return Json(int64_t(n.get_int64()));
        case simdjson::ondemand::number_type::unsigned_integer: {
          uint64_t u = n.get_uint64();
          if (u > uint64_t(INT64_MAX)) return Json(double(u));
          return Json(int64_t(u));
        }
        default: return Json(n.get_double());
      }
    }
    case simdjson::ondemand::json_type::string: {
      std::string_view s;
      if (auto err = v.get_string().get(s)) return invalid_argument(simdjson::error_message(err));
      return Json(s);
    }
    case simdjson::ondemand::json_type::array: {
      simdjson::ondemand::array arr;
      if (auto err = v.get_array().get(arr)) return invalid_argument(simdjson::error_message(err));
      Json out = Json::array();
      for (auto item : arr) {
        simdjson::ondemand::value iv;
        if (auto err = item.get(iv)) return invalid_argument(simdjson::error_message(err));
        auto c = convert(iv, depth + 1, max_depth);
        if (!c.ok()) return c;
        out.push_back(std::move(c).value());
      }
      return out;
    }
    case simdjson::ondemand::json_type::object: {
      simdjson::ondemand::object obj;
      if (auto err = v.get_object().get(obj)) return invalid_argument(simdjson::error_message(err));
      Json out = Json::object();
      for (auto field : obj) {
        std::string_view key;
        if (auto err = field.unescaped_key().get(key)) return invalid_argument(simdjson::error_message(err));
        std::string k(key);
        if (out.find(k) != nullptr) return invalid_argument("duplicate object key \"" + k + "\"");
        simdjson::ondemand::value fv;
        if (auto err = field.value().get(fv)) return invalid_argument(simdjson::error_message(err));
        auto c = convert(fv, depth + 1, max_depth);
        if (!c.ok()) return c;
        out.as_object().emplace_back(std::move(k), std::move(c).value());
      }
      return out;
    }
  }
  return internal_error("unknown JSON value type");
}

}  // namespace

Json Json::array(Array items) {
  Json j;
  j.type_ = Type::kArray;
  j.array_ = std::make_shared<Array>(std::move(items));
  return j;
}

Json Json::object(Object members) {
  Json j;
  j.type_ = Type::kObject;
  j.object_ = std::make_shared<Object>(std::move(members));
  return j;
}

Json::Json(const Json& o)
    : type_(o.type_), bool_(o.bool_), int_(o.int_), double_(o.double_), string_(o.string_) {
  if (o.array_) array_ = std::make_shared<Array>(*o.array_);
  if (o.object_) object_ = std::make_shared<Object>(*o.object_);
}

Json& Json::operator=(const Json& o) {
  if (this != &o) {
    Json copy(o);
    *this = std::move(copy);
  }
  return *this;
}

Result<Json> Json::parse(std::string_view text, size_t max_depth) {
  auto located = [&](const std::string& fallback) -> Status {
    JsonErrorPlace place = locate_json_error(text, max_depth);
    if (place.reason.empty()) return invalid_argument("invalid JSON: " + fallback);
    return invalid_argument("invalid JSON at byte " + std::to_string(place.offset) + " (line " +
                            std::to_string(place.line) + ", column " + std::to_string(place.column) +
                            "): " + place.reason);
  };
  // The locator finds syntax errors with their place; simdjson then does the fast conversion
  // and the checks the locator leaves out (number ranges, UTF-8 validity of keys, depth).
  JsonErrorPlace syntax = locate_json_error(text, max_depth);
  if (syntax.reason == "nesting too deep") {
    return resource_exhausted("JSON nesting deeper than " + std::to_string(max_depth) + " levels");
  }
  if (!syntax.reason.empty()) return located(syntax.reason);
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(text);
  simdjson::ondemand::document doc;
  if (auto err = parser.iterate(padded).get(doc)) return located(simdjson::error_message(err));
  // A scalar document cannot be read as a value; wrap it in an array to reuse the converter.
  simdjson::ondemand::json_type root_type;
  if (auto err = doc.type().get(root_type)) return located(simdjson::error_message(err));
  if (root_type != simdjson::ondemand::json_type::array && root_type != simdjson::ondemand::json_type::object) {
    std::string wrapped;
    wrapped.reserve(text.size() + 2);
    wrapped.append(1, '[').append(text).append(1, ']');
    auto inner = parse(wrapped, max_depth + 1);
    if (!inner.ok()) return inner;
    return Json(inner->as_array().at(0));
  }
  simdjson::ondemand::value root;
  if (auto err = doc.get_value().get(root)) return located(simdjson::error_message(err));
  auto converted = convert(root, 1, max_depth);
  if (!converted.ok()) {
    if (converted.status().code() == Code::kResourceExhausted) return converted;
    return converted.status().with_context("invalid JSON");
  }
  return converted;
}

bool Json::as_bool() const { DLOOP_ASSERT(type_ == Type::kBool); return bool_; }
int64_t Json::as_int() const { DLOOP_ASSERT(type_ == Type::kInt); return int_; }
double Json::as_double() const {
  DLOOP_ASSERT(is_number());
  return type_ == Type::kInt ? static_cast<double>(int_) : double_;
}
const std::string& Json::as_string() const { DLOOP_ASSERT(type_ == Type::kString); return string_; }
const Json::Array& Json::as_array() const { DLOOP_ASSERT(type_ == Type::kArray); return *array_; }
Json::Array& Json::as_array() { DLOOP_ASSERT(type_ == Type::kArray); return *array_; }
const Json::Object& Json::as_object() const { DLOOP_ASSERT(type_ == Type::kObject); return *object_; }
Json::Object& Json::as_object() { DLOOP_ASSERT(type_ == Type::kObject); return *object_; }

const Json* Json::find(std::string_view key) const {
  if (type_ != Type::kObject) return nullptr;
  for (const auto& [k, v] : *object_) {
    if (k == key) return &v;
  }
  return nullptr;
}

Json* Json::find(std::string_view key) {
  return const_cast<Json*>(static_cast<const Json*>(this)->find(key));
}

Json& Json::set(std::string key, Json value) {
  DLOOP_ASSERT(type_ == Type::kObject);
  if (Json* existing = find(key)) {
    *existing = std::move(value);
    return *existing;
  }
  object_->emplace_back(std::move(key), std::move(value));
  return object_->back().second;
}

void Json::push_back(Json value) {
  DLOOP_ASSERT(type_ == Type::kArray);
  array_->push_back(std::move(value));
}

size_t Json::size() const {
  if (type_ == Type::kArray) return array_->size();
  if (type_ == Type::kObject) return object_->size();
  return 0;
}

bool Json::operator==(const Json& o) const {
  if (is_number() && o.is_number()) {
    if (type_ == Type::kInt && o.type_ == Type::kInt) return int_ == o.int_;
    return as_double() == o.as_double();
  }
  if (type_ != o.type_) return false;
  switch (type_) {
    case Type::kNull: return true;
    case Type::kBool: return bool_ == o.bool_;
    case Type::kString: return string_ == o.string_;
    case Type::kArray: return *array_ == *o.array_;
    case Type::kObject: {
      // Key order does not matter for equality.
      if (object_->size() != o.object_->size()) return false;
      for (const auto& [k, v] : *object_) {
        const Json* other = o.find(k);
        if (other == nullptr || !(v == *other)) return false;
      }
      return true;
    }
    default: return false;
  }
}

}  // namespace dloop::base
