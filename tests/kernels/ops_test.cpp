// rms_norm, rope, swiglu, add and add_bias on every runnable ISA against the references, with
// odd sizes (vector tails). Tolerance: |y - y_ref| <= 1e-5 * (|y_ref| + 1) element-wise
// (2e-5 for rope, whose angle tables are rounded to f32).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "dloop/kernels/ops.h"
#include "dloop/kernels/reference.h"
#include "kernel_test_util.h"

namespace dloop::kernels {
namespace {

void expect_rel_close(const std::vector<float>& got, const std::vector<float>& want, double tol,
                      const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    ASSERT_LE(err, tol * (std::fabs(want[i]) + 1.0)) << what << " element " << i << " got "
                                                     << got[i] << " want " << want[i];
  }
}

TEST(Ops, RmsNormEveryIsa) {
  std::mt19937 rng(11);
  for (cpu::Isa isa : testing::runnable_isas()) {
    testing::ScopedIsa scoped(isa);
    for (int64_t dim : {1, 7, 16, 64, 100, 1280}) {
      const int64_t rows = 5;
      const std::vector<float> x = testing::random_floats(rng, rows * dim, -3, 3);
      const std::vector<float> w = testing::random_floats(rng, dim, 0.5f, 1.5f);
      std::vector<float> y(x.size()), want(x.size());
      ref::rms_norm_f32_ref(x.data(), w.data(), want.data(), rows, dim, 1e-6f);
      rms_norm_f32(x.data(), w.data(), y.data(), rows, dim, 1e-6f);
      const std::string what = std::string(cpu::isa_name(isa)) + " dim " + std::to_string(dim);
      expect_rel_close(y, want, 1e-5, what);
      std::vector<float> in_place = x;
      rms_norm_f32(in_place.data(), w.data(), in_place.data(), rows, dim, 1e-6f);
      expect_rel_close(in_place, want, 1e-5, what + " in place");
    }
  }
}

TEST(Ops, RopeBothTypesEveryIsa) {
  std::mt19937 rng(12);
  std::uniform_int_distribution<int32_t> pos(0, 2000);
  for (cpu::Isa isa : testing::runnable_isas()) {
    testing::ScopedIsa scoped(isa);
    for (RopeType type : {RopeType::kNorm, RopeType::kNeox}) {
      for (int64_t head_dim : {2, 6, 18, 64, 128}) {
        const int64_t tokens = 9, heads = 3;
        std::vector<int32_t> positions(tokens);
        for (int32_t& p : positions) p = pos(rng);
        positions[0] = 0;
        const std::vector<float> x = testing::random_floats(rng, tokens * heads * head_dim);
        std::vector<float> got = x, want = x;
        ref::rope_f32_ref(want.data(), tokens, heads, head_dim, positions.data(), 10000.0f, type);
        rope_f32(got.data(), tokens, heads, head_dim, positions.data(), 10000.0f, type);
        expect_rel_close(got, want, 2e-5,
                         std::string(cpu::isa_name(isa)) + (type == RopeType::kNorm ? " norm" : " neox") +
                             " head_dim " + std::to_string(head_dim));
      }
    }
  }
}

TEST(Ops, RopeKnownRotation) {
  // Position 1, head_dim 2: one pair rotated by exactly 1 radian, in either layout.
  for (RopeType type : {RopeType::kNorm, RopeType::kNeox}) {
    float x[2] = {1.0f, 0.0f};
    const int32_t p = 1;
    rope_f32(x, 1, 1, 2, &p, 10000.0f, type);
    EXPECT_NEAR(x[0], std::cos(1.0), 1e-6);
    EXPECT_NEAR(x[1], std::sin(1.0), 1e-6);
  }
}

TEST(Ops, RopeTablesFollowThetaHeadDimAndPositions) {
  // Consecutive calls reuse cached angle tables only when every input to them matches.
  std::mt19937 rng(15);
  std::vector<int32_t> positions = {0, 5, 9, 200};
  const std::vector<float> x = testing::random_floats(rng, 4 * 2 * 16);
  auto check = [&](float theta, int64_t head_dim, int64_t heads) {
    std::vector<float> got = x, want = x;
    ref::rope_f32_ref(want.data(), 4, heads, head_dim, positions.data(), theta, RopeType::kNeox);
    rope_f32(got.data(), 4, heads, head_dim, positions.data(), theta, RopeType::kNeox);
    expect_rel_close(got, want, 2e-5, "theta " + std::to_string(theta));
  };
  check(10000.0f, 16, 2);
  check(10000.0f, 16, 2);
  check(500000.0f, 16, 2);
  check(500000.0f, 8, 4);
  positions[2] = 10;
  check(500000.0f, 8, 4);
}

TEST(Ops, SwigluEveryIsa) {
  std::mt19937 rng(13);
  for (cpu::Isa isa : testing::runnable_isas()) {
    testing::ScopedIsa scoped(isa);
    for (int64_t n : {1, 15, 16, 17, 1000, 3456}) {
      std::vector<float> g = testing::random_floats(rng, n, -20, 20);
      if (n > 3) g[0] = -100.0f, g[1] = 100.0f, g[2] = 0.0f;
      const std::vector<float> u = testing::random_floats(rng, n, -2, 2);
      std::vector<float> got(static_cast<size_t>(n)), want(static_cast<size_t>(n));
      ref::swiglu_f32_ref(g.data(), u.data(), want.data(), n);
      swiglu_f32(g.data(), u.data(), got.data(), n);
      expect_rel_close(got, want, 1e-5, std::string(cpu::isa_name(isa)) + " n " + std::to_string(n));
      std::vector<float> in_place = g;  // out may alias gate
      swiglu_f32(in_place.data(), u.data(), in_place.data(), n);
      expect_rel_close(in_place, want, 1e-5, "in place");
    }
  }
}

TEST(Ops, AddAndAddBiasEveryIsa) {
  std::mt19937 rng(14);
  for (cpu::Isa isa : testing::runnable_isas()) {
    testing::ScopedIsa scoped(isa);
    for (int64_t dim : {1, 9, 33, 768}) {
      const int64_t rows = 3;
      const std::vector<float> x = testing::random_floats(rng, rows * dim);
      const std::vector<float> bias = testing::random_floats(rng, dim);
      const std::vector<float> y0 = testing::random_floats(rng, rows * dim);
      std::vector<float> got = y0, want = y0;
      add_f32(got.data(), x.data(), rows * dim);
      ref::add_f32_ref(want.data(), x.data(), rows * dim);
      EXPECT_EQ(got, want);
      add_bias_f32(got.data(), bias.data(), rows, dim);
      ref::add_bias_f32_ref(want.data(), bias.data(), rows, dim);
      EXPECT_EQ(got, want) << cpu::isa_name(isa) << " dim " << dim;
    }
  }
}

}  // namespace
}  // namespace dloop::kernels
