// GgufValue element access and GgufFile's metadata lookup and typed getters. Values are decoded
// from the mapped bytes on each call (little-endian, possibly unaligned, hence memcpy). Read-only;
// thread-safe.
#include <cstring>
#include <limits>
#include <string>

#include "dloop/engine/gguf.h"

namespace dloop::engine {

using base::Result;
using base::Status;

const char* gguf_type_name(GgufType type) {
  switch (type) {
    case GgufType::kU8: return "u8";
    case GgufType::kI8: return "i8";
    case GgufType::kU16: return "u16";
    case GgufType::kI16: return "i16";
    case GgufType::kU32: return "u32";
    case GgufType::kI32: return "i32";
    case GgufType::kF32: return "f32";
    case GgufType::kBool: return "bool";
    case GgufType::kString: return "string";
    case GgufType::kArray: return "array";
    case GgufType::kU64: return "u64";
    case GgufType::kI64: return "i64";
    case GgufType::kF64: return "f64";
  }
  return "unknown type";
}

bool gguf_type_is_integer(GgufType type) {
  switch (type) {
    case GgufType::kU8: case GgufType::kI8: case GgufType::kU16: case GgufType::kI16:
    case GgufType::kU32: case GgufType::kI32: case GgufType::kU64: case GgufType::kI64:
      return true;
    default:
      return false;
  }
}

bool gguf_type_is_float(GgufType type) { return type == GgufType::kF32 || type == GgufType::kF64; }

namespace {

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// An integer element as (negative, magnitude), so every i64 and u64 value is representable.
struct WideInt {
  bool negative;
  uint64_t magnitude;
};

WideInt load_int(GgufType t, const uint8_t* p) {
  auto from_signed = [](int64_t v) {
    return v < 0 ? WideInt{true, 0 - static_cast<uint64_t>(v)} : WideInt{false, static_cast<uint64_t>(v)};
  };
  switch (t) {
    case GgufType::kU8: return {false, load<uint8_t>(p)};
    case GgufType::kI8: return from_signed(load<int8_t>(p));
    case GgufType::kU16: return {false, load<uint16_t>(p)};
    case GgufType::kI16: return from_signed(load<int16_t>(p));
    case GgufType::kU32: return {false, load<uint32_t>(p)};
    case GgufType::kI32: return from_signed(load<int32_t>(p));
    case GgufType::kU64: return {false, load<uint64_t>(p)};
    case GgufType::kI64: return from_signed(load<int64_t>(p));
    default: DLOOP_ASSERT_MSG(false, "not an integer GGUF type");
  }
  return {false, 0};
}

uint64_t element_bytes(GgufType t) {
  switch (t) {
    case GgufType::kU8: case GgufType::kI8: case GgufType::kBool: return 1;
    case GgufType::kU16: case GgufType::kI16: return 2;
    case GgufType::kU32: case GgufType::kI32: case GgufType::kF32: return 4;
    default: return 8;
  }
}

}  // namespace

const uint8_t* GgufValue::element_ptr(uint64_t i) const {
  DLOOP_ASSERT(i < count_ && raw_ != nullptr);
  return raw_ + i * element_bytes(elem_type_);
}

std::optional<int64_t> GgufValue::int_at(uint64_t i) const {
  DLOOP_ASSERT(gguf_type_is_integer(elem_type_));
  WideInt w = load_int(elem_type_, element_ptr(i));
  if (w.negative) {
    if (w.magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - w.magnitude);  // two's complement wrap is well defined in C++20
  }
  if (w.magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(w.magnitude);
}

std::optional<uint64_t> GgufValue::uint_at(uint64_t i) const {
  DLOOP_ASSERT(gguf_type_is_integer(elem_type_));
  WideInt w = load_int(elem_type_, element_ptr(i));
  if (w.negative) return std::nullopt;
  return w.magnitude;
}

double GgufValue::float_at(uint64_t i) const {
  DLOOP_ASSERT(gguf_type_is_float(elem_type_));
  const uint8_t* p = element_ptr(i);
  return elem_type_ == GgufType::kF32 ? static_cast<double>(load<float>(p)) : load<double>(p);
}

bool GgufValue::bool_at(uint64_t i) const {
  DLOOP_ASSERT(elem_type_ == GgufType::kBool);
  return *element_ptr(i) != 0;
}

std::string_view GgufValue::string_at(uint64_t i) const {
  DLOOP_ASSERT(elem_type_ == GgufType::kString && i < strings_.size());
  return strings_[i];
}

const GgufValue* GgufFile::find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kvs_[it->second].value;
}

const GgufTensor* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

Result<const GgufValue*> GgufFile::find_typed(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) return base::not_found(name_ + ": key '" + std::string(key) + "' not found");
  return v;
}

Status GgufFile::type_error(std::string_view key, const char* want, const GgufValue& v) const {
  std::string got = gguf_type_name(v.type());
  if (v.is_array()) got = std::string("array of ") + gguf_type_name(v.elem_type());
  return base::invalid_argument(name_ + ": key '" + std::string(key) + "': expected " + want + ", got " + got);
}

Result<uint32_t> GgufFile::get_u32(std::string_view key) const {
  DLOOP_ASSIGN_OR_RETURN(const GgufValue* v, find_typed(key));
  if (v->is_array() || !gguf_type_is_integer(v->type())) return type_error(key, "u32", *v);
  std::optional<uint64_t> u = v->uint_at(0);
  if (!u || *u > std::numeric_limits<uint32_t>::max()) {
    std::string shown = u ? std::to_string(*u) : std::to_string(*v->int_at(0));
    return base::invalid_argument(name_ + ": key '" + std::string(key) + "': " + gguf_type_name(v->type()) +
                                  " value " + shown + " does not fit in u32");
  }
  return static_cast<uint32_t>(*u);
}

Result<float> GgufFile::get_f32(std::string_view key) const {
  DLOOP_ASSIGN_OR_RETURN(const GgufValue* v, find_typed(key));
  if (v->is_array() || !gguf_type_is_float(v->type())) return type_error(key, "f32", *v);
  return static_cast<float>(v->float_at(0));
}

Result<bool> GgufFile::get_bool(std::string_view key) const {
  DLOOP_ASSIGN_OR_RETURN(const GgufValue* v, find_typed(key));
  if (v->type() != GgufType::kBool) return type_error(key, "bool", *v);
  return v->bool_at(0);
}

Result<std::string> GgufFile::get_string(std::string_view key) const {
  DLOOP_ASSIGN_OR_RETURN(const GgufValue* v, find_typed(key));
  if (v->type() != GgufType::kString) return type_error(key, "string", *v);
  return std::string(v->string_at(0));
}

Result<std::span<const std::string_view>> GgufFile::get_string_array(std::string_view key) const {
  DLOOP_ASSIGN_OR_RETURN(const GgufValue* v, find_typed(key));
  if (!v->is_array() || v->elem_type() != GgufType::kString) return type_error(key, "array of string", *v);
  return v->strings();
}

Result<std::vector<int32_t>> GgufFile::get_i32_array(std::string_view key) const {
  DLOOP_ASSIGN_OR_RETURN(const GgufValue* v, find_typed(key));
  if (!v->is_array() || !gguf_type_is_integer(v->elem_type())) return type_error(key, "array of i32", *v);
  std::vector<int32_t> out;
  out.reserve(v->size());
  for (uint64_t i = 0; i < v->size(); ++i) {
    std::optional<int64_t> x = v->int_at(i);
    if (!x || *x < std::numeric_limits<int32_t>::min() || *x > std::numeric_limits<int32_t>::max()) {
      return base::invalid_argument(name_ + ": key '" + std::string(key) + "': element " + std::to_string(i) +
                                    " does not fit in i32");
    }
    out.push_back(static_cast<int32_t>(*x));
  }
  return out;
}

Result<std::vector<float>> GgufFile::get_f32_array(std::string_view key) const {
  DLOOP_ASSIGN_OR_RETURN(const GgufValue* v, find_typed(key));
  if (!v->is_array() || !gguf_type_is_float(v->elem_type())) return type_error(key, "array of f32", *v);
  std::vector<float> out;
  out.reserve(v->size());
  for (uint64_t i = 0; i < v->size(); ++i) out.push_back(static_cast<float>(v->float_at(i)));
  return out;
}

}  // namespace dloop::engine
