// The host side of the CUDA dequantize kernel, on every machine (no GPU needed): the per-element
// decoder the kernel runs (dequant_element.h) gives exactly kernels::ref::dequantize_row_ref's
// f32 values for every supported type, on random blocks with finite f16 scales, and its block
// sizes agree with dtype.h.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "dloop/kernels/cuda/dequant_element.h"
#include "dloop/kernels/dtype.h"
#include "dloop/kernels/matmul.h"
#include "dloop/kernels/reference.h"

namespace dloop::kernels::cuda {
namespace {

// Random blocks of `type` for a row of n elements, with its f16 scales set to finite values.
std::vector<uint8_t> random_row(DType type, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const DTypeInfo info = dtype_info(type);
  std::vector<uint8_t> row(static_cast<size_t>(row_bytes(type, n)));
  for (auto& b : row) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  auto put = [&](size_t at) {
    const uint16_t h = f32_to_f16(scale(rng));
    std::memcpy(row.data() + at, &h, 2);
  };
  for (size_t b = 0; b < row.size(); b += static_cast<size_t>(info.block_bytes)) {
    switch (type) {
      case DType::kQ8_0: case DType::kQ4_0: put(b); break;
      case DType::kQ4_K: put(b); put(b + 2); break;
      case DType::kQ6_K: put(b + 208); break;
      case DType::kF16: put(b); break;
      case DType::kBF16: {
        const uint16_t h = f32_to_bf16(scale(rng));
        std::memcpy(row.data() + b, &h, 2);
        break;
      }
      case DType::kF32: {
        const float f = scale(rng);
        std::memcpy(row.data() + b, &f, 4);
        break;
      }
    }
  }
  return row;
}

TEST(CudaDequantLayout, BlockSizesMatchDtypeTable) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ6_K}) {
    const DTypeInfo info = dtype_info(t);
    EXPECT_EQ(block_elems(static_cast<uint32_t>(t)), info.block_elems) << info.name;
    EXPECT_EQ(block_bytes(static_cast<uint32_t>(t)), info.block_bytes) << info.name;
  }
  EXPECT_EQ(block_elems(3), 0);  // Q4_1: not supported
}

TEST(CudaDequantLayout, EveryElementEqualsTheReferenceDecoder) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ6_K}) {
    SCOPED_TRACE(dtype_info(t).name);
    const int64_t n = 512;  // two K-quant super-blocks, 16 Q8_0 blocks
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      const std::vector<uint8_t> row = random_row(t, n, seed);
      std::vector<float> want(static_cast<size_t>(n));
      ref::dequantize_row_ref(t, row.data(), want.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const float got = dequant_row_element(static_cast<uint32_t>(t), row.data(), i);
        ASSERT_EQ(std::memcmp(&got, &want[static_cast<size_t>(i)], 4), 0)
            << "element " << i << ": " << got << " vs " << want[static_cast<size_t>(i)];
      }
    }
  }
}

TEST(CudaDequantLayout, HalfConversionMatchesTheCpuOnEveryBitPattern) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float want = f16_to_f32(static_cast<uint16_t>(h));
    const float got = half_bits_to_float(static_cast<uint16_t>(h));
    if (want != want) {
      EXPECT_NE(got, got) << h;  // NaN stays NaN
    } else {
      ASSERT_EQ(std::memcmp(&got, &want, 4), 0) << "f16 bits " << h;
    }
    const float want_bf = bf16_to_f32(static_cast<uint16_t>(h));
    const float got_bf = bf16_bits_to_float(static_cast<uint16_t>(h));
    ASSERT_EQ(std::memcmp(&got_bf, &want_bf, 4), 0) << "bf16 bits " << h;
  }
}

}  // namespace
}  // namespace dloop::kernels::cuda
