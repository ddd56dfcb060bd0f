// Decoding one element of a ggml block (Q8_0, Q4_0, Q4_K, Q6_K) or plain half-precision value,
// as a function of (block bytes, element index). It is the layout knowledge the CUDA dequantize
// kernel runs per thread, written once for host and device so that a CPU-only unit test
// (tests/cuda/dequant_layout_test.cpp) checks it against kernels::ref::dequantize_row_ref on
// every machine. The arithmetic follows ggml's dequantize_row_* expression by expression; the
// device build compiles it with -fmad=false so no a*b-c becomes a fused multiply-add.
// Pure functions; thread-safe. No CUDA headers are needed on the host side.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define DLOOP_HD __host__ __device__ __forceinline__
#else
#define DLOOP_HD inline
#endif

namespace dloop::kernels::cuda {

// ggml type ids (kernels::DType values), repeated so this header needs nothing else.
constexpr uint32_t kTypeF32 = 0, kTypeF16 = 1, kTypeQ4_0 = 2, kTypeQ8_0 = 8, kTypeQ4_K = 12,
                   kTypeQ6_K = 14, kTypeBF16 = 30;

DLOOP_HD float bits_to_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

// IEEE binary16 (with subnormals, inf, NaN) to f32, exactly as kernels::f16_to_f32.
DLOOP_HD float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F;
  const uint32_t mant = h & 0x3FF;
  if (exp == 0) {
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;  // mant * 2^-24, exact
    return sign ? -v : v;
  }
  if (exp == 31) return bits_to_float(sign | 0x7F800000u | (mant << 13));
  return bits_to_float(sign | ((exp + 112) << 23) | (mant << 13));
}

DLOOP_HD float bf16_bits_to_float(uint16_t h) { return bits_to_float(static_cast<uint32_t>(h) << 16); }

// Little-endian u16 at any 1-byte alignment.
DLOOP_HD uint16_t load_u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (static_cast<uint32_t>(p[1]) << 8));
}

// Elements per block and bytes per block of a type (0, 0 for an unknown id).
DLOOP_HD int block_elems(uint32_t type) {
  switch (type) {
    case kTypeF32: case kTypeF16: case kTypeBF16: return 1;
    case kTypeQ4_0: case kTypeQ8_0: return 32;
    case kTypeQ4_K: case kTypeQ6_K: return 256;
    default: return 0;
  }
}
DLOOP_HD int block_bytes(uint32_t type) {
  switch (type) {
    case kTypeF32: return 4;
    case kTypeF16: case kTypeBF16: return 2;
    case kTypeQ4_0: return 18;
    case kTypeQ8_0: return 34;
    case kTypeQ4_K: return 144;
    case kTypeQ6_K: return 210;
    default: return 0;
  }
}

// Q4_K's 6-bit scale and min of sub-block j (0..7), as ggml's get_scale_min_k4.
DLOOP_HD void q4k_scale_min(int j, const uint8_t* s, int* sc, int* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
    *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Element j of the block at `b` (j < block_elems(type)). Unknown types give 0 (callers check the
// type before launching).
DLOOP_HD float dequant_element(uint32_t type, const uint8_t* b, int j) {
  switch (type) {
    case kTypeF32: {
      const uint32_t u = b[0] | (static_cast<uint32_t>(b[1]) << 8) | (static_cast<uint32_t>(b[2]) << 16) |
                         (static_cast<uint32_t>(b[3]) << 24);
      return bits_to_float(u);
    }
    case kTypeF16: return half_bits_to_float(load_u16(b));
    case kTypeBF16: return bf16_bits_to_float(load_u16(b));
    case kTypeQ8_0: {  // d (f16), qs[32] int8
      const float d = half_bits_to_float(load_u16(b));
      return static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
    }
    case kTypeQ4_0: {  // d (f16), qs[16]: element j low nibble of byte j, element j+16 high nibble
      const float d = half_bits_to_float(load_u16(b));
      const uint8_t q = b[2 + (j & 15)];
      const int x = (j < 16 ? (q & 0x0F) : (q >> 4)) - 8;
      return static_cast<float>(x) * d;
    }
    case kTypeQ4_K: {  // d, dmin (f16), scales[12], qs[128]; 4 chunks of 64 = 2 sub-blocks of 32
      const float d = half_bits_to_float(load_u16(b));
      const float dmin = half_bits_to_float(load_u16(b + 2));
      const uint8_t* scales = b + 4;
      const uint8_t* qs = b + 16;
      const int chunk = j / 64, within = j % 64, l = within % 32, hi = within / 32;
      int sc = 0, m = 0;
      q4k_scale_min(2 * chunk + hi, scales, &sc, &m);
      const float d1 = d * static_cast<float>(sc);
      const float m1 = dmin * static_cast<float>(m);
      const uint8_t q = qs[chunk * 32 + l];
      const int nib = hi ? (q >> 4) : (q & 0xF);
      return d1 * static_cast<float>(nib) - m1;
    }
    case kTypeQ6_K: {  // ql[128], qh[64], scales[16] int8, d (f16) at byte 208
      const float d = half_bits_to_float(load_u16(b + 208));
      const int half = j / 128, r = j % 128, quarter = r / 32, l = r % 32;
      const uint8_t* ql = b + half * 64;
      const uint8_t* qh = b + 128 + half * 32;
      const auto* sc = reinterpret_cast<const int8_t*>(b + 192 + half * 8);
      const int is = l / 16;
      int q = 0;
      switch (quarter) {
        case 0: q = (ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4); break;
        case 1: q = (ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4); break;
        case 2: q = (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4); break;
        default: q = (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4); break;
      }
      const auto q8 = static_cast<int8_t>(q - 32);
      return d * static_cast<float>(sc[is + 2 * quarter]) * static_cast<float>(q8);
    }
    default: return 0.0f;
  }
}

// Element i of a row of such blocks.
DLOOP_HD float dequant_row_element(uint32_t type, const uint8_t* row, int64_t i) {
  const int be = block_elems(type);
  return dequant_element(type, row + (i / be) * block_bytes(type), static_cast<int>(i % be));
}

}  // namespace dloop::kernels::cuda
