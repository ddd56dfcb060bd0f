// attention_f32 on every runnable ISA against ref::attention_f32_ref: single query and key,
// GQA groups, head_dim and sequence lengths off the register tiles, large logits (the max
// subtraction), and thread-count independence. Tolerance: |out - ref| <= 1e-5 * max|v|.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dloop/kernels/attention.h"
#include "dloop/kernels/reference.h"
#include "kernel_test_util.h"

namespace dloop::kernels {
namespace {

struct Case {
  AttentionShape shape;
  float magnitude;  // inputs drawn from [-magnitude, magnitude]
};

std::vector<float> run(ThreadPool& pool, const Case& c, std::mt19937& rng, std::vector<float>* want,
                       float* v_max) {
  const AttentionShape& s = c.shape;
  const std::vector<float> q = testing::random_floats(rng, s.n_q * s.n_head * s.head_dim, -c.magnitude, c.magnitude);
  const std::vector<float> k = testing::random_floats(rng, s.n_kv * s.n_head_kv * s.head_dim, -c.magnitude, c.magnitude);
  const std::vector<float> v = testing::random_floats(rng, s.n_kv * s.n_head_kv * s.head_dim, -1, 1);
  std::vector<float> out(q.size(), NAN);
  want->assign(q.size(), 0.0f);
  ref::attention_f32_ref(s, q.data(), k.data(), v.data(), want->data());
  attention_f32(pool, s, q.data(), k.data(), v.data(), out.data());
  *v_max = 0;
  for (float f : v) *v_max = std::max(*v_max, std::fabs(f));
  return out;
}

TEST(Attention, MatchesReferenceEveryIsa) {
  std::mt19937 rng(21);
  ThreadPool pool(2);
  auto shape = [](int64_t n_q, int64_t n_kv, int64_t h, int64_t hkv, int64_t d) {
    return AttentionShape{n_q, n_kv, h, hkv, d, 1.0f / std::sqrt(static_cast<float>(d))};
  };
  const Case cases[] = {
      {shape(1, 1, 1, 1, 1), 1},    {shape(1, 5, 2, 2, 8), 1},     {shape(5, 7, 2, 1, 8), 1},
      {shape(33, 70, 4, 2, 64), 1}, {shape(40, 300, 3, 3, 80), 1}, {shape(17, 17, 14, 2, 64), 1},
      {shape(70, 33, 2, 1, 128), 1}, {shape(20, 50, 2, 2, 16), 8},  {shape(3, 600, 1, 1, 32), 1}};
  for (cpu::Isa isa : testing::runnable_isas()) {
    testing::ScopedIsa scoped(isa);
    for (const Case& c : cases) {
      std::vector<float> want;
      float v_max = 0;
      const std::vector<float> got = run(pool, c, rng, &want, &v_max);
      const AttentionShape& s = c.shape;
      testing::expect_close(got.data(), want.data(), static_cast<int64_t>(got.size()), 1e-5, v_max,
                            std::string(cpu::isa_name(isa)) + " n_q " + std::to_string(s.n_q) +
                                " n_kv " + std::to_string(s.n_kv) + " heads " +
                                std::to_string(s.n_head) + "/" + std::to_string(s.n_head_kv) +
                                " d " + std::to_string(s.head_dim));
    }
  }
}

TEST(Attention, SameBitsForOneAndTwoThreads) {
  std::mt19937 rng(22);
  const AttentionShape s{45, 60, 6, 2, 64, 0.125f};
  const std::vector<float> q = testing::random_floats(rng, s.n_q * s.n_head * s.head_dim);
  const std::vector<float> k = testing::random_floats(rng, s.n_kv * s.n_head_kv * s.head_dim);
  const std::vector<float> v = testing::random_floats(rng, s.n_kv * s.n_head_kv * s.head_dim);
  std::vector<float> o1(q.size()), o2(q.size());
  ThreadPool one(1), two(2);
  attention_f32(one, s, q.data(), k.data(), v.data(), o1.data());
  attention_f32(two, s, q.data(), k.data(), v.data(), o2.data());
  EXPECT_EQ(0, std::memcmp(o1.data(), o2.data(), o1.size() * sizeof(float)));
}

TEST(Attention, UniformKeysAverageValues) {
  // Identical keys give equal weights, so each output is the mean of the values.
  const AttentionShape s{2, 4, 1, 1, 3, 1.0f};
  const std::vector<float> q = {1, 2, 3, -1, 0, 5};
  const std::vector<float> k(12, 0.5f);
  const std::vector<float> v = {1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15};
  std::vector<float> out(6);
  ThreadPool pool(1);
  attention_f32(pool, s, q.data(), k.data(), v.data(), out.data());
  const float want[6] = {7, 8, 9, 7, 8, 9};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(out[i], want[i], 1e-5);
}

}  // namespace
}  // namespace dloop::kernels
