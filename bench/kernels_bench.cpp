// kernels_bench: GFLOP/s of dloop's matmul for every weight type on the model shapes (m = 320
// canvas positions), next to OpenBLAS cblas_sgemm on the same f32 problem, plus attention.
// Run as documented in docs/performance.md:
//   env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE build/bench/kernels_bench
// Flags: --threads=N (default: default_thread_count()); --best-of=N prints a Markdown table of the
// best of N interleaved calls per entry instead of running Google Benchmark (robust on a shared
// machine); otherwise Google Benchmark's own flags.
// Counters: GFLOPS = 2*m*n*k / wall time (attention: 4*n_q*n_kv*head_dim*n_head).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dloop/kernels/attention.h"
#include "dloop/kernels/matmul.h"
#include "dloop/kernels/thread_pool.h"

#if DLOOP_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

using dloop::kernels::DType;

struct Shape {
  const char* model;
  int64_t n;  // weight rows (output features)
  int64_t k;  // weight cols (input features)
};

constexpr int64_t kM = 320;
const Shape kShapes[] = {
    {"h256", 256, 256},    {"h256", 704, 256},    {"h256", 256, 704},    {"h256", 4096, 256},
    {"h768", 768, 768},    {"h768", 2048, 768},   {"h768", 768, 2048},   {"h768", 32000, 768},
    {"0.5B", 1280, 1280},  {"0.5B", 3456, 1280},  {"0.5B", 1280, 3456},  {"0.5B", 32000, 1280},
};
const DType kTypes[] = {DType::kF32,  DType::kF16,  DType::kBF16, DType::kQ8_0,
                        DType::kQ4_0, DType::kQ4_K, DType::kQ6_K};

int g_threads = 0;

std::vector<float> random_floats(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = dist(rng);
  return v;
}

// Random weights of `type`: converted floats, or random quants with small positive scales.
std::vector<uint8_t> random_weights(DType type, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  std::vector<uint8_t> out(static_cast<size_t>(dloop::kernels::row_bytes(type, cols) * rows));
  std::mt19937 rng(42);
  if (type == DType::kF32 || type == DType::kF16 || type == DType::kBF16) {
    const std::vector<float> v = random_floats(n, 43);
    for (int64_t i = 0; i < n; ++i) {
      if (type == DType::kF32) {
        std::memcpy(out.data() + 4 * i, &v[i], 4);
      } else {
        const uint16_t h = type == DType::kF16 ? dloop::kernels::f32_to_f16(v[i])
                                               : dloop::kernels::f32_to_bf16(v[i]);
        std::memcpy(out.data() + 2 * i, &h, 2);
      }
    }
    return out;
  }
  for (uint8_t& b : out) b = static_cast<uint8_t>(rng());
  const auto info = dloop::kernels::dtype_info(type);
  const uint16_t d = dloop::kernels::f32_to_f16(0.01f);
  for (int64_t blk = 0; blk < n / info.block_elems; ++blk) {
    uint8_t* p = out.data() + blk * info.block_bytes;
    std::memcpy(type == DType::kQ6_K ? p + 208 : p, &d, 2);
    if (type == DType::kQ4_K) std::memcpy(p + 2, &d, 2);
  }
  return out;
}

void set_flops(benchmark::State& state, double flops_per_iteration) {
  state.counters["GFLOPS"] = benchmark::Counter(flops_per_iteration * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void bm_matmul(benchmark::State& state, DType type, Shape s) {
  dloop::kernels::ThreadPool pool(g_threads);
  const std::vector<float> x = random_floats(kM * s.k, 1);
  const std::vector<uint8_t> w = random_weights(type, s.n, s.k);
  std::vector<float> y(static_cast<size_t>(kM * s.n));
  const dloop::kernels::WeightView view{w.data(), type, s.n, s.k};
  for (auto _ : state) {
    dloop::kernels::matmul(pool, x.data(), kM, view, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * kM * s.n * s.k);
}

#if DLOOP_HAVE_OPENBLAS
void bm_sgemm_openblas(benchmark::State& state, Shape s) {
  openblas_set_num_threads(g_threads);
  const std::vector<float> x = random_floats(kM * s.k, 1);
  const std::vector<float> w = random_floats(s.n * s.k, 2);
  std::vector<float> y(static_cast<size_t>(kM * s.n));
  for (auto _ : state) {
    // y[m x n] = x[m x k] * w[n x k]^T, the same problem as matmul with f32 weights.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(kM),
                static_cast<blasint>(s.n), static_cast<blasint>(s.k), 1.0f, x.data(),
                static_cast<blasint>(s.k), w.data(), static_cast<blasint>(s.k), 0.0f, y.data(),
                static_cast<blasint>(s.n));
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * kM * s.n * s.k);
}
#endif

void bm_attention(benchmark::State& state, dloop::kernels::AttentionShape s) {
  dloop::kernels::ThreadPool pool(g_threads);
  const std::vector<float> q = random_floats(s.n_q * s.n_head * s.head_dim, 3);
  const std::vector<float> k = random_floats(s.n_kv * s.n_head_kv * s.head_dim, 4);
  const std::vector<float> v = random_floats(s.n_kv * s.n_head_kv * s.head_dim, 5);
  std::vector<float> out(q.size());
  for (auto _ : state) {
    dloop::kernels::attention_f32(pool, s, q.data(), k.data(), v.data(), out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 4.0 * s.n_q * s.n_kv * s.head_dim * s.n_head);
}

// --best-of=N: for each shape, N rounds; each round calls OpenBLAS sgemm once and matmul once
// per weight type, interleaved, and the fastest call of each is kept. On a shared machine the
// best call approaches the unloaded speed, and interleaving exposes every entry to the same load.
// Prints a Markdown table of GFLOP/s.
double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void run_best_of(int rounds) {
  dloop::kernels::ThreadPool pool(g_threads);
#if DLOOP_HAVE_OPENBLAS
  openblas_set_num_threads(g_threads);
#endif
  std::printf("| shape (m x n x k) | OpenBLAS sgemm |");
  for (DType t : kTypes) std::printf(" %s |", dloop::kernels::dtype_info(t).name);
  std::printf(" F32 / OpenBLAS |\n|---|---|");
  for (size_t i = 0; i <= std::size(kTypes); ++i) std::printf("---|");
  std::printf("\n");
  for (const Shape& s : kShapes) {
    const double flops = 2.0 * kM * s.n * s.k;
    const std::vector<float> x = random_floats(kM * s.k, 1);
    std::vector<float> y(static_cast<size_t>(kM * s.n));
    std::vector<std::vector<uint8_t>> weights;
    for (DType t : kTypes) weights.push_back(random_weights(t, s.n, s.k));
    std::vector<double> best(std::size(kTypes) + 1, 1e30);  // [0]: OpenBLAS
    for (int r = 0; r < rounds; ++r) {
#if DLOOP_HAVE_OPENBLAS
      const auto* w32 = reinterpret_cast<const float*>(weights[0].data());
      double t0 = seconds_now();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(kM),
                  static_cast<blasint>(s.n), static_cast<blasint>(s.k), 1.0f, x.data(),
                  static_cast<blasint>(s.k), w32, static_cast<blasint>(s.k), 0.0f, y.data(),
                  static_cast<blasint>(s.n));
      best[0] = std::min(best[0], seconds_now() - t0);
#endif
      for (size_t i = 0; i < std::size(kTypes); ++i) {
        if (s.k % dloop::kernels::dtype_info(kTypes[i]).block_elems != 0) continue;
        const dloop::kernels::WeightView view{weights[i].data(), kTypes[i], s.n, s.k};
        const double t1 = seconds_now();
        dloop::kernels::matmul(pool, x.data(), kM, view, y.data());
        best[i + 1] = std::min(best[i + 1], seconds_now() - t1);
      }
    }
    std::printf("| %s/%lldx%lldx%lld |", s.model, static_cast<long long>(kM),
                static_cast<long long>(s.n), static_cast<long long>(s.k));
    for (double b : best) {
      if (b < 1e30)
        std::printf(" %.0f |", flops / b * 1e-9);
      else
        std::printf(" n/a |");
    }
    if (best[0] < 1e30)
      std::printf(" %.2f |\n", best[0] / best[1]);
    else
      std::printf(" - |\n");
    std::fflush(stdout);
  }
}

std::string shape_name(const Shape& s) {
  return std::string(s.model) + "/" + std::to_string(kM) + "x" + std::to_string(s.n) + "x" +
         std::to_string(s.k);
}

void register_all() {
  for (const Shape& s : kShapes) {
#if DLOOP_HAVE_OPENBLAS
    benchmark::RegisterBenchmark(("sgemm_openblas/" + shape_name(s)).c_str(), bm_sgemm_openblas, s)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
#endif
    for (DType t : kTypes) {
      if (s.k % dloop::kernels::dtype_info(t).block_elems != 0) continue;  // e.g. Q4_K at k=704
      benchmark::RegisterBenchmark(
          ("matmul_" + std::string(dloop::kernels::dtype_info(t).name) + "/" + shape_name(s)).c_str(),
          bm_matmul, t, s)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  // Attention at m = 320 for the 0.5B layout (14 heads, 2 kv heads, head_dim 64) and hidden 768.
  const dloop::kernels::AttentionShape attn[] = {{kM, kM, 14, 2, 64, 0.125f},
                                                 {kM, kM, 12, 12, 64, 0.125f}};
  for (const auto& a : attn)
    benchmark::RegisterBenchmark(("attention_f32/" + std::to_string(a.n_q) + "x" + std::to_string(a.n_kv) +
                                  "/h" + std::to_string(a.n_head) + "kv" + std::to_string(a.n_head_kv) +
                                  "d" + std::to_string(a.head_dim)).c_str(),
                                 bm_attention, a)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  g_threads = dloop::kernels::default_thread_count();
  int best_of = 0;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0)
      g_threads = std::max(1, std::atoi(argv[i] + 10));
    else if (std::strncmp(argv[i], "--best-of=", 10) == 0)
      best_of = std::max(1, std::atoi(argv[i] + 10));
    else
      rest.push_back(argv[i]);
  }
  if (best_of > 0) {
    std::printf("threads=%d, best of %d interleaved calls, m=%lld, GFLOP/s\n\n", g_threads, best_of,
                static_cast<long long>(kM));
    run_best_of(best_of);
    return 0;
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 1;
  benchmark::AddCustomContext("threads", std::to_string(g_threads));
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
