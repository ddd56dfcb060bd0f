// Row dequantization: the public dequantize_row (dispatching to the active ISA), the exact scalar
// decoders (ref::dequantize_row_ref, also the scalar ISA's decoder) and the half-precision
// conversions. The decoders follow ggml-quants.c's dequantize_row_* expression by expression
// (same operation order, no fused multiply-add) so results are bit-identical. Pure; thread-safe.
#include <cstring>

#include "blocks.h"
#include "dloop/base/assert.h"
#include "dloop/kernels/matmul.h"
#include "dloop/kernels/reference.h"
#include "isa.h"
#include "isa_impl.h"

namespace dloop::kernels {
namespace {

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

void dequantize_q8_0(const cpu::BlockQ8_0* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = f16_to_f32(x[i].d);
    for (int j = 0; j < cpu::kQk; ++j) y[i * cpu::kQk + j] = x[i].qs[j] * d;
  }
}

void dequantize_q4_0(const cpu::BlockQ4_0* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = f16_to_f32(x[i].d);
    for (int j = 0; j < cpu::kQk / 2; ++j) {
      const int x0 = (x[i].qs[j] & 0x0F) - 8;
      const int x1 = (x[i].qs[j] >> 4) - 8;
      y[i * cpu::kQk + j] = x0 * d;
      y[i * cpu::kQk + j + cpu::kQk / 2] = x1 * d;
    }
  }
}

void dequantize_q4_k(const cpu::BlockQ4_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const uint8_t* q = x[i].qs;
    const float d = f16_to_f32(x[i].d);
    const float min = f16_to_f32(x[i].dmin);
    int is = 0;
    uint8_t sc, m;
    for (int j = 0; j < cpu::kQkK; j += 64) {
      cpu::q4k_scale_min(is + 0, x[i].scales, &sc, &m);
      const float d1 = d * sc;
      const float m1 = min * m;
      cpu::q4k_scale_min(is + 1, x[i].scales, &sc, &m);
      const float d2 = d * sc;
      const float m2 = min * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
      q += 32;
      is += 2;
    }
  }
}

void dequantize_q6_k(const cpu::BlockQ6_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = f16_to_f32(x[i].d);
    const uint8_t* ql = x[i].ql;
    const uint8_t* qh = x[i].qh;
    const int8_t* sc = x[i].scales;
    for (int n = 0; n < cpu::kQkK; n += 128) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int8_t q1 = static_cast<int8_t>(((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
        const int8_t q2 = static_cast<int8_t>(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
        const int8_t q3 = static_cast<int8_t>(((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
        const int8_t q4 = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
        y[l + 0] = d * sc[is + 0] * q1;
        y[l + 32] = d * sc[is + 2] * q2;
        y[l + 64] = d * sc[is + 4] * q3;
        y[l + 96] = d * sc[is + 6] * q4;
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }
}

}  // namespace

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F;
  const uint32_t mant = h & 0x3FF;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in f32.
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7F800000u | (mant << 13));
  return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t f32_to_f16(float f) {
  // Round to nearest even (after F. Giesen's float_to_half_fast3_rtne).
  const uint32_t f32_infinity = 255u << 23;
  const uint32_t f16_max = (127u + 16u) << 23;
  const uint32_t denorm_magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  uint32_t u = float_bits(f);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint16_t out;
  if (u >= f16_max) {
    out = u > f32_infinity ? 0x7E00 : 0x7C00;
  } else if (u < (113u << 23)) {
    const float t = bits_float(u) + bits_float(denorm_magic);
    out = static_cast<uint16_t>(float_bits(t) - denorm_magic);
  } else {
    const uint32_t mant_odd = (u >> 13) & 1;
    u += (static_cast<uint32_t>(15 - 127) << 23) + 0xFFF;
    u += mant_odd;
    out = static_cast<uint16_t>(u >> 13);
  }
  return static_cast<uint16_t>(out | (sign >> 16));
}

float bf16_to_f32(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

uint16_t f32_to_bf16(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 64);  // quiet NaN
  return static_cast<uint16_t>((u + (0x7FFFu + ((u >> 16) & 1))) >> 16);
}

void dequantize_row(DType type, const void* src, float* dst, int64_t n) {
  cpu::active_kernels().dequantize_row(type, src, dst, n);
}

namespace ref {

void dequantize_row_ref(DType type, const void* src, float* dst, int64_t n) {
  const DTypeInfo info = dtype_info(type);
  DLOOP_ASSERT_MSG(n % info.block_elems == 0, "dequantize_row: n is not a multiple of the block");
  const int64_t nb = n / info.block_elems;
  switch (type) {
    case DType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case DType::kF16: {
      const auto* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(h[i]);
      return;
    }
    case DType::kBF16: {
      const auto* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(h[i]);
      return;
    }
    case DType::kQ8_0: return dequantize_q8_0(static_cast<const cpu::BlockQ8_0*>(src), dst, nb);
    case DType::kQ4_0: return dequantize_q4_0(static_cast<const cpu::BlockQ4_0*>(src), dst, nb);
    case DType::kQ4_K: return dequantize_q4_k(static_cast<const cpu::BlockQ4_K*>(src), dst, nb);
    case DType::kQ6_K: return dequantize_q6_k(static_cast<const cpu::BlockQ6_K*>(src), dst, nb);
  }
  DLOOP_ASSERT_MSG(false, "dequantize_row: unsupported type");
}

}  // namespace ref

namespace cpu {
float fp16_bits_to_f32(uint16_t h) { return f16_to_f32(h); }
namespace scalar {
void dequantize_row(DType type, const void* src, float* dst, int64_t n) {
  ref::dequantize_row_ref(type, src, dst, n);
}
}  // namespace scalar
}  // namespace cpu

}  // namespace dloop::kernels
