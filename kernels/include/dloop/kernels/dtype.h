// Weight element types, with ggml's numeric ids and block layouts (GGUF tensor type field).
// A row of ne0 elements of a block type occupies (ne0 / block_elems) * block_bytes bytes.
// Pure data; thread-safe.
#pragma once

#include <cstdint>
#include <optional>

namespace dloop::kernels {

enum class DType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ8_0 = 8,
  kQ4_K = 12,
  kQ6_K = 14,
  kBF16 = 30,
};

struct DTypeInfo {
  DType type;
  const char* name;     // "F32", "Q8_0", ...
  int64_t block_elems;  // elements per block (1 for plain floats)
  int64_t block_bytes;  // bytes per block
};

// Info for a supported type, nullopt for any other ggml id (the GGUF reader names it in its error).
inline std::optional<DTypeInfo> dtype_info(uint32_t ggml_id) {
  switch (ggml_id) {
    case 0: return DTypeInfo{DType::kF32, "F32", 1, 4};
    case 1: return DTypeInfo{DType::kF16, "F16", 1, 2};
    case 2: return DTypeInfo{DType::kQ4_0, "Q4_0", 32, 18};
    case 8: return DTypeInfo{DType::kQ8_0, "Q8_0", 32, 34};
    case 12: return DTypeInfo{DType::kQ4_K, "Q4_K", 256, 144};
    case 14: return DTypeInfo{DType::kQ6_K, "Q6_K", 256, 210};
    case 30: return DTypeInfo{DType::kBF16, "BF16", 1, 2};
    default: return std::nullopt;
  }
}

inline DTypeInfo dtype_info(DType t) { return *dtype_info(static_cast<uint32_t>(t)); }

// Bytes of one row of `n` elements; n must be a multiple of the block size.
inline int64_t row_bytes(DType t, int64_t n) {
  DTypeInfo i = dtype_info(t);
  return n / i.block_elems * i.block_bytes;
}

}  // namespace dloop::kernels
