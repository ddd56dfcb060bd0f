// Every CUDA kernel against the CPU reference (kernels::ref) on random inputs. Tolerances are
// relative to the largest expected magnitude (cuda_test_util.h): RMSNorm and RoPE 1e-5 (double
// inside, as the reference), attention 1e-4 (f32 online softmax against the reference's double
// sums), SwiGLU 1e-6, adds, conversions and dequantization exact.
// Label gpu: skipped when no device is present.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "cuda_test_util.h"
#include "dloop/kernels/dtype.h"
#include "dloop/kernels/matmul.h"
#include "dloop/kernels/reference.h"

namespace dloop::kernels::cuda {
namespace {

using test::DeviceVec;
using test::random_floats;

TEST(CudaKernels, RmsNormMatchesReference) {
  DLOOP_SKIP_WITHOUT_GPU();
  for (int64_t dim : {1, 100, 1000, 4096}) {
    const int64_t rows = 7;
    auto x = random_floats(static_cast<size_t>(rows * dim), 1, -3, 3);
    auto w = random_floats(static_cast<size_t>(dim), 2);
    std::vector<float> want(x.size());
    ref::rms_norm_f32_ref(x.data(), w.data(), want.data(), rows, dim, 1e-5f);
    DeviceVec<float> dx(x), dw(w), dy(x.size());
    ASSERT_STATUS_OK(rms_norm_f32(dx.get(), dw.get(), dy.get(), rows, dim, 1e-5f, nullptr));
    EXPECT_CLOSE(dy.download(), want, 1e-5);
    // Selected rows, in another order.
    std::vector<int32_t> pick = {6, 0, 3};
    DeviceVec<int32_t> dpick(pick);
    DeviceVec<float> dz(pick.size() * static_cast<size_t>(dim));
    ASSERT_STATUS_OK(rms_norm_rows_f32(dx.get(), dpick.get(), 3, dw.get(), dz.get(), dim, 1e-5f, nullptr));
    std::vector<float> want_rows;
    for (int32_t r : pick) want_rows.insert(want_rows.end(), want.begin() + r * dim, want.begin() + (r + 1) * dim);
    EXPECT_CLOSE(dz.download(), want_rows, 1e-5);
  }
}

TEST(CudaKernels, RopeBothTypesMatchReference) {
  DLOOP_SKIP_WITHOUT_GPU();
  for (RopeType type : {RopeType::kNorm, RopeType::kNeox}) {
    for (int64_t head_dim : {16, 64, 128}) {
      const int64_t tokens = 9, heads = 3;
      auto x = random_floats(static_cast<size_t>(tokens * heads * head_dim), 3);
      std::vector<int32_t> pos = {0, 1, 2, 17, 100, 511, 1024, 3000, 4095};
      std::vector<float> want = x;
      ref::rope_f32_ref(want.data(), tokens, heads, head_dim, pos.data(), 10000.0f, type);
      DeviceVec<float> dx(x);
      DeviceVec<int32_t> dpos(pos);
      ASSERT_STATUS_OK(rope_f32(dx.get(), tokens, heads, head_dim, dpos.get(), 10000.0f, type, nullptr));
      EXPECT_CLOSE(dx.download(), want, 1e-5);
    }
  }
}

TEST(CudaKernels, RopeRejectsOddHeadDim) {
  DLOOP_SKIP_WITHOUT_GPU();
  const base::Status s = rope_f32(nullptr, 1, 1, 7, nullptr, 10000.0f, RopeType::kNorm, nullptr);
  EXPECT_EQ(s.code(), base::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("head_dim"), std::string::npos) << s.message();
}

TEST(CudaKernels, AttentionMatchesReference) {
  DLOOP_SKIP_WITHOUT_GPU();
  // Short query sets (1 query per warp), long ones (4 per warp), grouped heads, partial tiles.
  const AttentionShape shapes[] = {
      {1, 1, 1, 1, 16, 0.25f},           {37, 53, 4, 2, 64, 0.125f},   {32, 1056, 4, 4, 128, 0.088f},
      {300, 300, 2, 2, 128, 0.088f},     {513, 97, 6, 3, 32, 0.17f},   {5, 33, 8, 1, 128, 0.088f},
  };
  uint64_t seed = 10;
  for (const AttentionShape& s : shapes) {
    SCOPED_TRACE(testing::Message() << "n_q " << s.n_q << " n_kv " << s.n_kv << " head_dim " << s.head_dim);
    auto q = random_floats(static_cast<size_t>(s.n_q * s.n_head * s.head_dim), ++seed, -2, 2);
    auto k = random_floats(static_cast<size_t>(s.n_kv * s.n_head_kv * s.head_dim), ++seed, -2, 2);
    auto v = random_floats(static_cast<size_t>(s.n_kv * s.n_head_kv * s.head_dim), ++seed);
    std::vector<float> want(q.size());
    ref::attention_f32_ref(s, q.data(), k.data(), v.data(), want.data());
    DeviceVec<float> dq(q), dk(k), dv(v), dout(q.size());
    ASSERT_STATUS_OK(attention_f32(s, dq.get(), dk.get(), dv.get(), dout.get(), nullptr));
    EXPECT_CLOSE(dout.download(), want, 1e-4);
  }
}

TEST(CudaKernels, AttentionRejectsWideHeads) {
  DLOOP_SKIP_WITHOUT_GPU();
  const AttentionShape s{4, 4, 2, 2, 256, 0.0625f};
  EXPECT_EQ(attention_f32(s, nullptr, nullptr, nullptr, nullptr, nullptr).code(), base::Code::kInvalidArgument);
}

TEST(CudaKernels, ElementwiseMatchReference) {
  DLOOP_SKIP_WITHOUT_GPU();
  const int64_t rows = 33, dim = 301, n = rows * dim;
  auto g = random_floats(static_cast<size_t>(n), 20, -6, 6);
  auto u = random_floats(static_cast<size_t>(n), 21, -2, 2);
  auto bias = random_floats(static_cast<size_t>(dim), 22);
  std::vector<float> want(g.size());
  ref::swiglu_f32_ref(g.data(), u.data(), want.data(), n);
  DeviceVec<float> dg(g), du(u), db(bias);
  ASSERT_STATUS_OK(swiglu_f32(dg.get(), du.get(), dg.get(), n, nullptr));  // in place, as the forward pass does
  EXPECT_CLOSE(dg.download(), want, 1e-6);

  std::vector<float> y = u;
  ref::add_f32_ref(y.data(), g.data(), n);
  DeviceVec<float> dy(u), dg2(g);
  ASSERT_STATUS_OK(add_f32(dy.get(), dg2.get(), n, nullptr));
  EXPECT_EQ(dy.download(), y);  // one f32 addition: exact

  ref::add_bias_f32_ref(y.data(), bias.data(), rows, dim);
  ASSERT_STATUS_OK(add_bias_f32(dy.get(), db.get(), rows, dim, nullptr));
  EXPECT_EQ(dy.download(), y);
}

TEST(CudaKernels, ConversionsRoundLikeTheCpu) {
  DLOOP_SKIP_WITHOUT_GPU();
  auto x = random_floats(4099, 30, -70000, 70000);
  x[0] = 0.0f;
  x[1] = -0.0f;
  x[2] = 1e-8f;    // f16 subnormal range
  x[3] = 65520.0f; // rounds to f16 infinity
  DeviceVec<float> dx(x);
  DeviceVec<uint16_t> dh(x.size()), db(x.size());
  ASSERT_STATUS_OK(convert_f32(dx.get(), dh.get(), static_cast<int64_t>(x.size()), StoreType::kF16, nullptr));
  ASSERT_STATUS_OK(convert_f32(dx.get(), db.get(), static_cast<int64_t>(x.size()), StoreType::kBF16, nullptr));
  const auto h = dh.download();
  const auto b = db.download();
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(h[i], f32_to_f16(x[i])) << "f16 of " << x[i];
    ASSERT_EQ(b[i], f32_to_bf16(x[i])) << "bf16 of " << x[i];
  }
}

TEST(CudaKernels, EmbedRowsGathersEveryTableType) {
  DLOOP_SKIP_WITHOUT_GPU();
  const int64_t vocab = 50, dim = 24;
  auto table = random_floats(static_cast<size_t>(vocab * dim), 40);
  std::vector<uint16_t> t16(table.size()), tb16(table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    t16[i] = f32_to_f16(table[i]);
    tb16[i] = f32_to_bf16(table[i]);
  }
  std::vector<int32_t> tokens = {3, 0, 49, 3, 17};
  DeviceVec<int32_t> dt(tokens);
  DeviceVec<float> d32(table), out(tokens.size() * static_cast<size_t>(dim));
  DeviceVec<uint16_t> d16(t16), db16(tb16);
  struct Case {
    const void* table;
    StoreType type;
    float (*decode)(const std::vector<float>&, const std::vector<uint16_t>&, const std::vector<uint16_t>&, size_t);
  };
  const Case cases[] = {
      {d32.get(), StoreType::kF32, [](const auto& f, const auto&, const auto&, size_t i) { return f[i]; }},
      {d16.get(), StoreType::kF16, [](const auto&, const auto& h, const auto&, size_t i) { return f16_to_f32(h[i]); }},
      {db16.get(), StoreType::kBF16, [](const auto&, const auto&, const auto& b, size_t i) { return bf16_to_f32(b[i]); }},
  };
  for (const Case& c : cases) {
    ASSERT_STATUS_OK(embed_rows(c.table, c.type, vocab, dim, dt.get(), static_cast<int64_t>(tokens.size()), out.get(), nullptr));
    const auto got = out.download();
    for (size_t t = 0; t < tokens.size(); ++t) {
      for (int64_t j = 0; j < dim; ++j) {
        const size_t src = static_cast<size_t>(tokens[t] * dim + j);
        ASSERT_EQ(got[t * static_cast<size_t>(dim) + static_cast<size_t>(j)], c.decode(table, t16, tb16, src))
            << store_type_name(c.type) << " token " << tokens[t];
      }
    }
  }
}

// Random blocks with finite f16 scales (as tests/cuda/dequant_layout_test.cpp builds them).
std::vector<uint8_t> random_blocks(DType type, int64_t rows, int64_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const DTypeInfo info = dtype_info(type);
  std::vector<uint8_t> data(static_cast<size_t>(rows * row_bytes(type, cols)));
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  auto put = [&](size_t at) {
    const uint16_t h = f32_to_f16(scale(rng));
    std::memcpy(data.data() + at, &h, 2);
  };
  for (size_t b = 0; b < data.size(); b += static_cast<size_t>(info.block_bytes)) {
    if (type == DType::kQ8_0 || type == DType::kQ4_0 || type == DType::kF16) put(b);
    if (type == DType::kQ4_K) { put(b); put(b + 2); }
    if (type == DType::kQ6_K) put(b + 208);
    if (type == DType::kBF16) { const uint16_t h = f32_to_bf16(scale(rng)); std::memcpy(data.data() + b, &h, 2); }
    if (type == DType::kF32) { const float f = scale(rng); std::memcpy(data.data() + b, &f, 4); }
  }
  return data;
}

TEST(CudaKernels, DequantizeEqualsTheReferenceDecoderExactly) {
  DLOOP_SKIP_WITHOUT_GPU();
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ6_K}) {
    SCOPED_TRACE(dtype_info(t).name);
    const int64_t rows = 5, cols = 768;
    const auto data = random_blocks(t, rows, cols, 50 + static_cast<uint64_t>(t));
    std::vector<float> want(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) {
      ref::dequantize_row_ref(t, data.data() + r * row_bytes(t, cols), want.data() + r * cols, cols);
    }
    DeviceVec<uint8_t> src(data);
    DeviceVec<float> f32(want.size());
    DeviceVec<uint16_t> f16(want.size()), bf16(want.size());
    ASSERT_STATUS_OK(dequantize(static_cast<uint32_t>(t), src.get(), rows, cols, f32.get(), StoreType::kF32, nullptr));
    ASSERT_STATUS_OK(dequantize(static_cast<uint32_t>(t), src.get(), rows, cols, f16.get(), StoreType::kF16, nullptr));
    ASSERT_STATUS_OK(dequantize(static_cast<uint32_t>(t), src.get(), rows, cols, bf16.get(), StoreType::kBF16, nullptr));
    const auto g32 = f32.download();
    const auto g16 = f16.download();
    const auto gb16 = bf16.download();
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(std::memcmp(&g32[i], &want[i], 4), 0) << "element " << i << ": " << g32[i] << " vs " << want[i];
      ASSERT_EQ(g16[i], f32_to_f16(want[i])) << "element " << i;
      ASSERT_EQ(gb16[i], f32_to_bf16(want[i])) << "element " << i;
    }
  }
}

TEST(CudaKernels, DequantizeRejectsBadShapes) {
  DLOOP_SKIP_WITHOUT_GPU();
  EXPECT_EQ(dequantize(8, nullptr, 2, 33, nullptr, StoreType::kBF16, nullptr).code(), base::Code::kInvalidArgument);
  EXPECT_EQ(dequantize(3, nullptr, 2, 32, nullptr, StoreType::kBF16, nullptr).code(), base::Code::kInvalidArgument);
}

// The decoding-step reference: argmax (lowest id on ties), softmax in double.
TokenChoice reference_choice(const float* x, int64_t n, int32_t exclude) {
  int32_t best = -1, second = -1;
  for (int32_t i = 0; i < n; ++i) {
    if (i == exclude) continue;
    if (best < 0 || x[i] > x[best]) {
      second = best;
      best = i;
    } else if (second < 0 || x[i] > x[second]) {
      second = i;
    }
  }
  const double mx = x[best];
  double s = 0, a = 0;
  for (int32_t i = 0; i < n; ++i) {
    if (i == exclude) continue;
    const double d = x[i] - mx, e = std::exp(d);
    s += e;
    a += e * d;
  }
  const double p2 = second >= 0 ? std::exp(x[second] - mx) / s : 0.0;
  return TokenChoice{best, static_cast<float>(1 / s), static_cast<float>(1 / s - p2),
                     static_cast<float>(std::log(s) - a / s)};
}

TEST(CudaKernels, ChooseTokensMatchesTheSoftmaxReference) {
  DLOOP_SKIP_WITHOUT_GPU();
  for (int64_t vocab : {2, 300, 4096, 126464}) {
    const int64_t rows = 6;
    auto logits = random_floats(static_cast<size_t>(rows * vocab), 60, -8, 8);
    logits[static_cast<size_t>(1 * vocab + vocab - 1)] = 30.0f;  // row 1: one sure token
    if (vocab > 3) {
      logits[static_cast<size_t>(2 * vocab + 1)] = 20.0f;        // row 2: a tie, lower id wins
      logits[static_cast<size_t>(2 * vocab + 3)] = 20.0f;
    }
    const int32_t exclude = static_cast<int32_t>(vocab - 1);  // the "mask" token: row 1's best
    DeviceVec<float> dl(logits);
    DeviceVec<TokenChoice> out(static_cast<size_t>(rows));
    ChoiceParams greedy;
    greedy.exclude = exclude;
    ASSERT_STATUS_OK(choose_tokens(dl.get(), rows, vocab, greedy, out.get(), nullptr));
    const auto got = out.download();
    for (int64_t r = 0; r < rows; ++r) {
      const TokenChoice want = reference_choice(logits.data() + r * vocab, vocab, exclude);
      EXPECT_EQ(got[r].token, want.token) << "row " << r << " vocab " << vocab;
      EXPECT_NEAR(got[r].confidence, want.confidence, 1e-6 * std::max(1.0f, want.confidence));
      EXPECT_NEAR(got[r].margin, want.margin, 1e-6);
      EXPECT_NEAR(got[r].entropy, want.entropy, 1e-5 * std::max(1.0f, want.entropy));
    }
    if (vocab > 3) {
      EXPECT_EQ(got[2].token, 1);
      EXPECT_NEAR(got[2].margin, 0.0f, 1e-7);
    }
    EXPECT_NE(got[1].token, exclude);
  }
}

TEST(CudaKernels, DeviceCountIsNotAnError) {
  // Runs everywhere: without a driver or GPU the count is 0, never a crash.
  EXPECT_GE(device_count(), 0);
}

}  // namespace
}  // namespace dloop::kernels::cuda
