// dequantize_row: exact values on hand-made blocks of every type (Q4_K and Q6_K scale and bit
// unpacking included), bit-identity of every ISA's decoder with the reference on random blocks,
// and the half-precision conversions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "dloop/kernels/matmul.h"
#include "dloop/kernels/reference.h"
#include "kernel_test_util.h"

namespace dloop::kernels {
namespace {

using testing::put_f16;

// Decodes with the reference and with every runnable ISA; all must equal `want` exactly.
void expect_decodes_to(DType type, const std::vector<uint8_t>& src, const std::vector<float>& want) {
  const int64_t n = static_cast<int64_t>(want.size());
  std::vector<float> got(want.size());
  ref::dequantize_row_ref(type, src.data(), got.data(), n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << "ref, element " << i;
  for (cpu::Isa isa : testing::runnable_isas()) {
    std::fill(got.begin(), got.end(), -1.0f);
    cpu::kernels_for(isa).dequantize_row(type, src.data(), got.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << cpu::isa_name(isa) << ", element " << i;
  }
}

TEST(Dequantize, F16KnownBitPatterns) {
  const std::vector<uint16_t> bits = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x0400, 0x8000,
                                      0x3555, 0x7C00, 0xFC00, 0x3800, 0x4248, 0x0000, 0xBC00,
                                      0x5640, 0x2E66, 0x1234};
  const std::vector<float> want = {1.0f, -2.0f, 65504.0f, 5.9604644775390625e-8f,
                                   6.0975551605224609e-5f, 6.103515625e-5f, -0.0f,
                                   0.333251953125f, INFINITY, -INFINITY, 0.5f, 3.140625f, 0.0f,
                                   -1.0f, 100.0f, 0.0999755859375f, 7.572174072265625e-4f};
  std::vector<uint8_t> src(bits.size() * 2);
  std::memcpy(src.data(), bits.data(), src.size());
  expect_decodes_to(DType::kF16, src, want);
  EXPECT_TRUE(std::signbit(f16_to_f32(0x8000)));
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7E00)));
}

TEST(Dequantize, Bf16KnownBitPatterns) {
  // 17 values so the SIMD decoders take both the vector loop and the scalar tail.
  std::vector<uint16_t> bits = {0x3F80, 0xC0A0, 0x4049, 0x0000, 0x8000, 0x7F80, 0x3E80, 0x4300, 0x3DCD,
                                0xBF00, 0x447A, 0x0080, 0x3F81, 0x4120, 0xC2C8, 0x3C23, 0x7F7F};
  std::vector<float> want = {1.0f, -5.0f, 3.140625f, 0.0f, -0.0f, INFINITY, 0.25f, 128.0f,
                             0.10009765625f, -0.5f, 1000.0f, 1.1754943508222875e-38f, 1.0078125f,
                             10.0f, -100.0f, 0.00994873046875f, 3.3895313892515355e38f};
  std::vector<uint8_t> src(bits.size() * 2);
  std::memcpy(src.data(), bits.data(), src.size());
  expect_decodes_to(DType::kBF16, src, want);
}

TEST(Dequantize, Q8_0HandMadeBlocks) {
  std::vector<uint8_t> src(2 * 34);
  std::vector<float> want(64);
  const float d[2] = {0.5f, -2.0f};
  for (int b = 0; b < 2; ++b) {
    put_f16(src.data() + 34 * b, d[b]);
    for (int j = 0; j < 32; ++j) {
      const int q = b == 0 ? j * 8 - 128 : 127 - j;  // covers -128 and 127
      src[34 * b + 2 + j] = static_cast<uint8_t>(static_cast<int8_t>(q));
      want[32 * b + j] = static_cast<float>(q) * d[b];
    }
  }
  expect_decodes_to(DType::kQ8_0, src, want);
}

TEST(Dequantize, Q4_0HandMadeBlock) {
  std::vector<uint8_t> src(18);
  std::vector<float> want(32);
  put_f16(src.data(), 2.0f);
  for (int j = 0; j < 16; ++j) {
    const int lo = j, hi = 15 - j;
    src[2 + j] = static_cast<uint8_t>(lo | (hi << 4));
    want[j] = static_cast<float>((lo - 8) * 2);       // element j: low nibble of byte j
    want[j + 16] = static_cast<float>((hi - 8) * 2);  // element j+16: high nibble of byte j
  }
  expect_decodes_to(DType::kQ4_0, src, want);
}

TEST(Dequantize, Q4_KHandMadeBlockUnpacksSixBitScales) {
  // Sub-block scales and mins, several above 15 so the 2 high bits stored apart matter.
  const int sc[8] = {1, 63, 17, 32, 45, 63, 33, 7};
  const int mn[8] = {0, 5, 63, 48, 20, 63, 1, 40};
  std::vector<uint8_t> src(144);
  put_f16(src.data(), 1.0f);      // d
  put_f16(src.data() + 2, 0.5f);  // dmin
  uint8_t* s = src.data() + 4;
  for (int j = 0; j < 4; ++j) {
    s[j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
    s[j + 4] = static_cast<uint8_t>(mn[j] | ((mn[j + 4] >> 4) << 6));
    s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((mn[j + 4] & 0xF) << 4));
  }
  uint8_t* qs = src.data() + 16;
  for (int i = 0; i < 128; ++i) qs[i] = static_cast<uint8_t>((i * 37 + 11) & 0xFF);
  std::vector<float> want(256);
  for (int e = 0; e < 256; ++e) {
    // Element e: chunk of 64 (32 bytes of qs), low nibbles first, then high nibbles.
    const int chunk = e / 64, within = e % 64, sub = e / 32;
    const uint8_t byte = qs[chunk * 32 + within % 32];
    const int q = within < 32 ? (byte & 0xF) : (byte >> 4);
    want[e] = 1.0f * static_cast<float>(sc[sub] * q) - 0.5f * static_cast<float>(mn[sub]);
  }
  expect_decodes_to(DType::kQ4_K, src, want);
}

TEST(Dequantize, Q6_KHandMadeBlockUnpacksSixBitQuants) {
  std::vector<uint8_t> src(210);
  uint8_t* ql = src.data();
  uint8_t* qh = src.data() + 128;
  auto* scales = reinterpret_cast<int8_t*>(src.data() + 192);
  put_f16(src.data() + 208, 0.25f);  // d is last
  for (int i = 0; i < 128; ++i) ql[i] = static_cast<uint8_t>((i * 53 + 7) & 0xFF);
  for (int i = 0; i < 64; ++i) qh[i] = static_cast<uint8_t>((i * 29 + 3) & 0xFF);
  for (int i = 0; i < 16; ++i) scales[i] = static_cast<int8_t>(i % 2 ? -(i * 8) : i * 8 + 1);
  scales[15] = -128;
  std::vector<float> want(256);
  for (int e = 0; e < 256; ++e) {
    // Halves of 128; in each, four groups of 32: (ql low, ql+32 low, ql high, ql+32 high) with
    // qh bits 0-1, 2-3, 4-5, 6-7; sub-block scale index l/16 + 2*group.
    const int half = e / 128, g = (e % 128) / 32, l = e % 32;
    const uint8_t lbyte = ql[half * 64 + l + (g % 2) * 32];
    const int low = g < 2 ? (lbyte & 0xF) : (lbyte >> 4);
    const int high = (qh[half * 32 + l] >> (2 * g)) & 3;
    const int scale = scales[half * 8 + l / 16 + 2 * g];
    want[e] = 0.25f * static_cast<float>(scale * ((low | (high << 4)) - 32));
  }
  expect_decodes_to(DType::kQ6_K, src, want);
}

TEST(Dequantize, EveryIsaBitIdenticalToReferenceOnRandomRows) {
  std::mt19937 rng(7);
  for (DType type : testing::all_types()) {
    const int64_t n = dtype_info(type).block_elems == 1 ? 1000 + 7 : 4 * 256;
    const std::vector<uint8_t> src = testing::random_weights(rng, type, 1, n);
    std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
    ref::dequantize_row_ref(type, src.data(), want.data(), n);
    for (cpu::Isa isa : testing::runnable_isas()) {
      cpu::kernels_for(isa).dequantize_row(type, src.data(), got.data(), n);
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
          << dtype_info(type).name << " on " << cpu::isa_name(isa);
    }
    // The public entry point uses the active ISA.
    dequantize_row(type, src.data(), got.data(), n);
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)));
  }
}

TEST(HalfConversions, RoundToNearestEven) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3C00);
  EXPECT_EQ(f32_to_f16(1.0f + 0x1p-11f), 0x3C00);          // tie -> even
  EXPECT_EQ(f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3C02);      // tie -> even (up)
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7C00);                 // rounds to inf
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7BFF);
  EXPECT_EQ(f32_to_f16(0x1p-25f), 0x0000);                 // tie at the smallest subnormal
  EXPECT_EQ(f32_to_f16(0x1.8p-25f), 0x0001);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xC000);
  EXPECT_EQ(f32_to_f16(NAN) & 0x7C00, 0x7C00);
  EXPECT_NE(f32_to_f16(NAN) & 0x03FF, 0);
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16(1.0f + 0x1p-8f), 0x3F80);          // tie -> even
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
  for (uint32_t h = 0; h < 0x7C00; ++h)  // every finite non-negative half round-trips
    ASSERT_EQ(f32_to_f16(f16_to_f32(static_cast<uint16_t>(h))), h);
}

}  // namespace
}  // namespace dloop::kernels
