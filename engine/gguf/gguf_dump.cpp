// describe(): a human-readable summary of a GgufFile (keys with types and values, tensor table),
// printed by `dloop generate --verbose`. Long strings and arrays are abbreviated so a 150k-token
// vocabulary prints as one line. Pure; thread-safe.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dloop/engine/gguf.h"

namespace dloop::engine {
namespace {

constexpr size_t kMaxStringBytes = 60;
constexpr uint64_t kMaxArrayItems = 8;

// A string as a double-quoted literal with control bytes escaped, cut after kMaxStringBytes.
std::string string_literal(std::string_view s) {
  std::string out = "\"";
  size_t n = std::min(s.size(), kMaxStringBytes);
  while (n < s.size() && n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // whole characters
  for (size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  if (s.size() > n) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

// The shortest %g text that reads back as the same value (as a float for f32 values).
std::string float_text(double x, bool is_f32) {
  char buf[40];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, x);
    double back = std::strtod(buf, nullptr);
    if (is_f32 ? static_cast<float>(back) == static_cast<float>(x) : back == x) break;
  }
  return buf;
}

std::string element_text(const GgufValue& v, uint64_t i) {
  GgufType t = v.elem_type();
  if (t == GgufType::kString) return string_literal(v.string_at(i));
  if (t == GgufType::kBool) return v.bool_at(i) ? "true" : "false";
  if (gguf_type_is_float(t)) return float_text(v.float_at(i), t == GgufType::kF32);
  if (std::optional<int64_t> x = v.int_at(i)) return std::to_string(*x);
  return std::to_string(*v.uint_at(i));
}

std::string value_text(const GgufValue& v) {
  if (!v.is_array()) return std::string(gguf_type_name(v.type())) + " " + element_text(v, 0);
  std::string out = std::string("array[") + gguf_type_name(v.elem_type()) + "; " + std::to_string(v.size()) + "] [";
  uint64_t n = std::min(v.size(), kMaxArrayItems);
  for (uint64_t i = 0; i < n; ++i) out += (i ? ", " : "") + element_text(v, i);
  if (v.size() > n) out += ", ...";
  return out + "]";
}

std::string shape_text(const GgufTensor& t) {
  std::string out = "{";
  for (int d = 0; d < t.n_dims; ++d) out += (d ? ", " : "") + std::to_string(t.ne[d]);
  return out + "}";
}

}  // namespace

std::string describe(const GgufFile& file) {
  std::string out = file.name() + ": GGUF v" + std::to_string(file.version()) + ", " +
                    std::to_string(file.file_size()) + " bytes, alignment " + std::to_string(file.alignment()) +
                    ", tensor data at byte " + std::to_string(file.data_offset()) + "\n";
  out += "metadata (" + std::to_string(file.kvs().size()) + " keys):\n";
  for (const GgufKv& kv : file.kvs()) out += "  " + std::string(kv.key) + " = " + value_text(kv.value) + "\n";
  out += "tensors (" + std::to_string(file.tensors().size()) + "):\n";
  char line[256];
  for (const GgufTensor& t : file.tensors()) {
    std::snprintf(line, sizeof(line), "  %-32s %-5s %-20s %12" PRIu64 " bytes at +%" PRIu64 "\n", t.name.c_str(),
                  kernels::dtype_info(t.type).name, shape_text(t).c_str(), t.n_bytes, t.offset);
    out += line;
  }
  return out;
}

}  // namespace dloop::engine
