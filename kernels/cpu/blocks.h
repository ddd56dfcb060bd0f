// Internal: ggml block structs for the quantized weight types (ggml-common.h layouts) and the
// get_scale_min_k4 unpacking of Q4_K's 6-bit scales. Pure data; thread-safe.
#pragma once

#include <cstdint>

namespace dloop::kernels::cpu {

constexpr int kQk = 32;    // elements per Q8_0 / Q4_0 block
constexpr int kQkK = 256;  // elements per K-quant super-block

struct BlockQ8_0 {
  uint16_t d;  // f16 scale
  int8_t qs[kQk];
};
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQk / 2];  // element j in the low nibble of byte j, element j+16 in the high nibble
};
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];  // 8 x (6-bit scale, 6-bit min)
  uint8_t qs[kQkK / 2];
};
struct BlockQ6_K {
  uint8_t ql[kQkK / 2];  // low 4 bits
  uint8_t qh[kQkK / 4];  // high 2 bits
  int8_t scales[kQkK / 16];
  uint16_t d;  // last
};
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ6_K) == 210);

// Scale and min of Q4_K sub-block j (0..7), as ggml's get_scale_min_k4.
inline void q4k_scale_min(int j, const uint8_t* s, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

}  // namespace dloop::kernels::cpu
