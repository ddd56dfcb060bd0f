// GGUF v3 reader: maps a model file read-only and exposes its metadata (typed getters) and its
// tensor table (name, type, shape, pointer to the bytes). Every count, length, offset and size in
// the file is checked against the file size before it is used, so a corrupt or hostile file is an
// error value (base::Status, code data_loss, naming the byte offset, key or tensor), never a crash
// and never an allocation the file size cannot justify. It is not a writer and it does not
// dequantize. Thread-safety: a GgufFile is immutable after open(); any number of threads may read
// it concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dloop/base/status.h"
#include "dloop/kernels/dtype.h"

namespace dloop::engine {

// GGUF metadata value types (ids as stored in the file).
enum class GgufType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};

// "u8", "i32", "f32", "bool", "string", "array", ...; "type N" for an id outside the enum.
const char* gguf_type_name(GgufType type);
bool gguf_type_is_integer(GgufType type);  // u8..i64, not bool
bool gguf_type_is_float(GgufType type);    // f32, f64

// One metadata value, scalar or array (never nested). Its strings and numbers are read from the
// file's bytes, so a GgufValue is valid only while its GgufFile lives.
class GgufValue {
 public:
  GgufType type() const { return type_; }
  // The element type: the array's element type, or type() for a scalar.
  GgufType elem_type() const { return elem_type_; }
  bool is_array() const { return type_ == GgufType::kArray; }
  // Element count: the array length, or 1 for a scalar.
  uint64_t size() const { return count_; }

  // Element i (i < size(); 0 for a scalar). Calling an accessor of the wrong element type is a
  // bug (asserts); check elem_type() first.
  // Integer elements: nullopt when the value does not fit the result type (u64 > INT64_MAX, or a
  // negative value as u64).
  std::optional<int64_t> int_at(uint64_t i) const;
  std::optional<uint64_t> uint_at(uint64_t i) const;
  double float_at(uint64_t i) const;  // f32, f64
  bool bool_at(uint64_t i) const;
  std::string_view string_at(uint64_t i) const;
  // All elements of a string value or string array.
  std::span<const std::string_view> strings() const { return strings_; }

 private:
  friend class GgufParser;
  const uint8_t* element_ptr(uint64_t i) const;

  GgufType type_ = GgufType::kU8;
  GgufType elem_type_ = GgufType::kU8;
  uint64_t count_ = 1;
  const uint8_t* raw_ = nullptr;          // numeric/bool payload in the file (little-endian, unaligned)
  std::vector<std::string_view> strings_; // string payloads in the file
};

struct GgufKv {
  std::string_view key;  // points into the file's bytes
  GgufValue value;
};

// One tensor. ne[] is in ggml order (ne[0] is the contiguous dimension); entries past n_dims are
// 1. data points at n_bytes bytes inside the mapping, aligned to the file's alignment relative to
// the file start; valid while the GgufFile lives.
struct GgufTensor {
  std::string name;
  kernels::DType type = kernels::DType::kF32;
  int n_dims = 0;
  int64_t ne[4] = {1, 1, 1, 1};
  uint64_t n_bytes = 0;
  uint64_t offset = 0;  // byte offset inside the data blob (file offset = data_offset() + offset)
  const uint8_t* data = nullptr;

  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

class GgufFile {
 public:
  // Maps `path` read-only and parses it. Errors: io_error (cannot open or map, with errno text),
  // data_loss (anything malformed: "model.gguf: byte 1234: string length 99999999 exceeds the
  // file"), unimplemented (an unsupported version or tensor type, naming it).
  static base::Result<std::unique_ptr<GgufFile>> open(const std::string& path);
  // Parses a file held in memory (tests, fuzzing); `name` is used in error messages.
  static base::Result<std::unique_ptr<GgufFile>> from_bytes(std::string bytes,
                                                            std::string name = "<memory>");
  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& name() const { return name_; }  // the path, or the name given to from_bytes
  uint32_t version() const { return version_; }
  uint64_t file_size() const { return size_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // file offset of the tensor data blob

  // Metadata, in file order.
  std::span<const GgufKv> kvs() const { return kvs_; }
  bool has(std::string_view key) const { return find(key) != nullptr; }
  const GgufValue* find(std::string_view key) const;  // nullptr when absent

  // Typed getters. Errors: not_found naming the key when absent; invalid_argument naming the key
  // and both types when the stored type does not convert, or the value when it does not fit.
  // get_u32 accepts any integer type whose value fits in a u32; get_f32 accepts f32 and f64.
  base::Result<uint32_t> get_u32(std::string_view key) const;
  base::Result<float> get_f32(std::string_view key) const;
  base::Result<bool> get_bool(std::string_view key) const;
  base::Result<std::string> get_string(std::string_view key) const;
  base::Result<std::span<const std::string_view>> get_string_array(std::string_view key) const;
  // Integer arrays of any element type whose values all fit in an i32.
  base::Result<std::vector<int32_t>> get_i32_array(std::string_view key) const;
  // f32 (or f64) arrays.
  base::Result<std::vector<float>> get_f32_array(std::string_view key) const;

  // Tensors, in file order.
  std::span<const GgufTensor> tensors() const { return tensors_; }
  const GgufTensor* find_tensor(std::string_view name) const;  // nullptr when absent

 private:
  friend class GgufParser;
  GgufFile() = default;
  base::Result<const GgufValue*> find_typed(std::string_view key) const;
  base::Status type_error(std::string_view key, const char* want, const GgufValue& v) const;

  std::string name_;
  std::string owned_;            // from_bytes: the file's bytes
  void* map_ = nullptr;          // open: the mapping (munmap'd by the destructor)
  uint64_t map_size_ = 0;
  const uint8_t* bytes_ = nullptr;
  uint64_t size_ = 0;
  uint32_t version_ = 0;
  uint32_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<GgufKv> kvs_;
  std::vector<GgufTensor> tensors_;
  std::unordered_map<std::string_view, size_t> kv_index_;      // key -> index in kvs_
  std::unordered_map<std::string_view, size_t> tensor_index_;  // name -> index in tensors_
};

// A human-readable summary for `dloop generate --verbose`: version, sizes, every key with its type
// and value (long arrays and strings abbreviated), and the tensor table (name, type, shape, bytes,
// offset). Pure; thread-safe.
std::string describe(const GgufFile& file);

}  // namespace dloop::engine
