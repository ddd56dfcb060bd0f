// matmul on every runnable ISA and weight type against ref::matmul_ref (f32 weights) or
// dequantize + f32 reference (other types), on odd shapes: m = 1, sizes that are not multiples
// of the register tile (14x32, 6x16, 4x16), of the k block (256) or of the row chunk (384).
// Tolerance per element: |y - y_ref| <= tol * ||x_i|| * ||w_n||, tol = 1e-5 for f32 weights and
// 1e-4 for the others.
// Also: results do not depend on the thread count, bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dloop/kernels/matmul.h"
#include "dloop/kernels/reference.h"
#include "kernel_test_util.h"

namespace dloop::kernels {
namespace {

struct Shape {
  int64_t m, n, k;
};

// y = x * w^T with the active ISA, checked against the reference.
void check_matmul(ThreadPool& pool, DType type, const Shape& s, std::mt19937& rng,
                  const std::string& what) {
  const std::vector<float> x = testing::random_floats(rng, s.m * s.k);
  const std::vector<uint8_t> w = testing::random_weights(rng, type, s.n, s.k);
  const WeightView view{w.data(), type, s.n, s.k};
  std::vector<float> y(static_cast<size_t>(s.m * s.n), NAN), want(y.size());
  ref::matmul_ref(x.data(), s.m, view, want.data());
  matmul(pool, x.data(), s.m, view, y.data());

  std::vector<float> w_row(static_cast<size_t>(s.k));
  const double tol = type == DType::kF32 ? 1e-5 : 1e-4;
  for (int64_t j = 0; j < s.n; ++j) {
    ref::dequantize_row_ref(type, w.data() + j * row_bytes(type, s.k), w_row.data(), s.k);
    const double wn = testing::l2_norm(w_row.data(), s.k);
    for (int64_t i = 0; i < s.m; ++i) {
      const double xn = testing::l2_norm(x.data() + i * s.k, s.k);
      const double err = std::fabs(static_cast<double>(y[i * s.n + j]) - want[i * s.n + j]);
      ASSERT_LE(err, tol * xn * wn + 1e-30)
          << what << " y[" << i << "][" << j << "] = " << y[i * s.n + j] << " want "
          << want[i * s.n + j];
    }
  }
}

TEST(Matmul, FloatWeightsOddShapesEveryIsa) {
  std::mt19937 rng(1);
  ThreadPool pool(2);
  const Shape shapes[] = {{1, 1, 1},    {1, 32, 16},  {3, 17, 7},    {14, 32, 256}, {15, 33, 257},
                          {29, 70, 100}, {1, 5, 600}, {33, 64, 513}, {2, 300, 40},  {50, 31, 1},
                          {3, 600, 40},  {400, 40, 300}};  // many panel groups; several row chunks
  for (cpu::Isa isa : testing::runnable_isas()) {
    testing::ScopedIsa scoped(isa);
    for (DType type : {DType::kF32, DType::kF16, DType::kBF16})
      for (const Shape& s : shapes)
        check_matmul(pool, type, s, rng,
                     std::string(cpu::isa_name(isa)) + " " + dtype_info(type).name + " " +
                         std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                         std::to_string(s.k));
  }
}

TEST(Matmul, BlockWeightsOddShapesEveryIsa) {
  std::mt19937 rng(2);
  ThreadPool pool(2);
  for (cpu::Isa isa : testing::runnable_isas()) {
    testing::ScopedIsa scoped(isa);
    for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ6_K}) {
      const int64_t block = dtype_info(type).block_elems;
      const Shape shapes[] = {{1, 1, block},      {1, 33, 2 * block}, {7, 16, 3 * block},
                              {15, 45, 256},      {29, 32, 768},      {40, 100, 512},
                              {390, 20, 256}};
      for (const Shape& s : shapes)
        check_matmul(pool, type, s, rng,
                     std::string(cpu::isa_name(isa)) + " " + dtype_info(type).name + " " +
                         std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                         std::to_string(s.k));
    }
  }
}

TEST(Matmul, SameBitsForOneAndTwoThreads) {
  std::mt19937 rng(3);
  ThreadPool one(1), two(2), three(3);
  for (DType type : testing::all_types()) {
    const Shape s{37, 200, 512};
    const std::vector<float> x = testing::random_floats(rng, s.m * s.k);
    const std::vector<uint8_t> w = testing::random_weights(rng, type, s.n, s.k);
    const WeightView view{w.data(), type, s.n, s.k};
    std::vector<float> y1(static_cast<size_t>(s.m * s.n)), y2(y1.size()), y3(y1.size());
    matmul(one, x.data(), s.m, view, y1.data());
    matmul(two, x.data(), s.m, view, y2.data());
    matmul(three, x.data(), s.m, view, y3.data());
    EXPECT_EQ(0, std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(float))) << dtype_info(type).name;
    EXPECT_EQ(0, std::memcmp(y1.data(), y3.data(), y1.size() * sizeof(float))) << dtype_info(type).name;
  }
}

TEST(Matmul, ModelShapeSmoke) {
  // One realistic shape per path (m = 320 canvas positions, hidden 768), active ISA only.
  std::mt19937 rng(4);
  ThreadPool pool(2);
  check_matmul(pool, DType::kF32, {320, 96, 768}, rng, "f32 320x96x768");
  check_matmul(pool, DType::kQ4_K, {320, 64, 768}, rng, "q4_k 320x64x768");
}

}  // namespace
}  // namespace dloop::kernels
