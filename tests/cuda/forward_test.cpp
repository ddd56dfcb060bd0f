// The CUDA backend against the CPU reference: whole forward passes of the checked-in llada and
// dream models (every weight type) and of random models from engine/synthetic, cached passes
// (prefix and dual) against the CPU's CachedForwarder, the device decoding step against the
// CPU logits, and greedy generations identical for f32 weights. Tolerances relative to the
// largest logit follow the precision of the device's matrix-product inputs (activations are
// rounded to the weight's type first, as in llama.cpp's cuBLAS path; the CPU keeps them in f32,
// or quantizes them to 8 bits for quantized weights): 1e-4 for f32 weights, 2e-2 for f16 and
// quantized weights (dequantized to f16 on the device; 11 significant bits), 6e-2 for bf16
// (8 significant bits, 8 times coarser). Measured on an H200 (docs/cuda.md): bf16 0.040 and
// llada-q8_0 0.012 on the checked-in models, every other model under 1e-2.
// Label gpu: skipped when no device is present.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <random>

#include "cuda_test_util.h"
#include "dloop/engine/cuda/cuda_backend.h"
#include "dloop/engine/decoding.h"
#include "dloop/engine/device.h"
#include "dloop/engine/forwarder.h"
#include "dloop/engine/random_model.h"
#include "dloop/engine/tokenizer.h"
#include "dloop/kernels/cuda/kernels.h"

namespace dloop::engine {
namespace {

const std::string kModels = std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/";

struct Loaded {
  std::unique_ptr<Model> model;
  std::unique_ptr<DeviceModel> device;
};

Loaded& load(const std::string& path) {
  static std::map<std::string, Loaded> cache;
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  Loaded l;
  auto file = GgufFile::open(path);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  auto m = Model::load(std::shared_ptr<const GgufFile>(std::move(file).value()));
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  l.model = std::move(m).value();
  auto d = cuda::open_cuda_model(*l.model);
  EXPECT_TRUE(d.ok()) << d.status().to_string();
  if (d.ok()) l.device = std::move(d).value();
  return cache.emplace(path, std::move(l)).first->second;
}

std::vector<int32_t> random_tokens(size_t n, int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = static_cast<int32_t>(rng() % static_cast<uint64_t>(vocab));
  return t;
}

std::vector<int32_t> rows_between(int64_t lo, int64_t hi) {
  std::vector<int32_t> r;
  for (int64_t i = lo; i < hi; ++i) r.push_back(static_cast<int32_t>(i));
  return r;
}

double tolerance(const Model& m) {
  switch (m.weights().layers[0].wq.type) {
    case kernels::DType::kF32: return 1e-4;
    case kernels::DType::kBF16: return 6e-2;
    default: return 2e-2;
  }
}

TEST(CudaForward, RegisteredWithTheDeviceRegistry) {
  EXPECT_TRUE(device_backend_available(Device::kCuda));
}

// The device's uncached forward of `rows` equals the CPU forward within the model's tolerance.
void expect_device_matches_cpu(kernels::ThreadPool& pool, Loaded& l, const std::vector<int32_t>& tokens,
                               const std::vector<int32_t>& rows) {
  const int64_t V = l.model->config().n_vocab;
  std::vector<float> want(rows.size() * static_cast<size_t>(V)), got(want.size());
  ForwardState fs;
  ASSERT_STATUS_OK(l.model->forward(pool, tokens, rows, want.data(), fs));
  auto fwd = l.device->make_forwarder(CacheMode::kNone);
  ASSERT_STATUS_OK(fwd->forward(tokens, rows, got.data(), PassHint{}));
  EXPECT_CLOSE(got, want, tolerance(*l.model));
  // The measured error goes into the test's output: docs/cuda.md records it per weight type.
  std::printf("forward %s (%s weights), %zu tokens: relative error %.3g\n", l.model->config().name.c_str(),
              kernels::dtype_info(l.model->weights().layers[0].wq.type).name, tokens.size(),
              kernels::cuda::test::max_rel_error(got, want));
}

TEST(CudaForward, CheckedInModelsMatchTheCpuForward) {
  DLOOP_SKIP_WITHOUT_GPU();
  kernels::ThreadPool pool(2);
  for (const char* name : {"llada-f32.gguf", "llada-tied-f32.gguf", "dream-f32.gguf", "llada-f16.gguf",
                           "llada-bf16.gguf", "llada-q8_0.gguf", "dream-q8_0.gguf", "llada-q4_0.gguf",
                           "llada256-q4_k.gguf", "llada256-q6_k.gguf"}) {
    SCOPED_TRACE(name);
    Loaded& l = load(kModels + name);
    ASSERT_TRUE(l.device);
    const int64_t V = l.model->config().n_vocab;
    for (size_t len : {1u, 9u, 70u}) {
      const auto tokens = random_tokens(len, V, len + 3);
      const auto rows = rows_between(0, static_cast<int64_t>(len));
      expect_device_matches_cpu(pool, l, tokens, rows);
    }
  }
}

TEST(CudaForward, RandomPresetModelsMatchTheCpuForward) {
  DLOOP_SKIP_WITHOUT_GPU();
  kernels::ThreadPool pool(2);
  const auto dir = std::filesystem::temp_directory_path() / "dloop-cuda-test";
  std::filesystem::create_directories(dir);
  for (const char* arch : {"llada", "dream"}) {
    for (kernels::DType type : {kernels::DType::kF32, kernels::DType::kBF16}) {
      RandomModelSpec spec = *random_model_preset("tiny");
      spec.arch = arch;
      spec.type = type;
      spec.n_head_kv = arch == std::string("dream") ? 2 : 4;  // grouped-query heads for dream
      const auto path = (dir / (std::string(arch) + "-" + kernels::dtype_info(type).name + ".gguf")).string();
      ASSERT_STATUS_OK(write_random_model(spec, path));
      SCOPED_TRACE(path);
      Loaded& l = load(path);
      ASSERT_TRUE(l.device);
      const int64_t V = l.model->config().n_vocab;
      const auto tokens = random_tokens(300, V, 5);  // > 256 queries: the 4-queries-per-warp attention path
      const auto rows = std::vector<int32_t>{0, 1, 150, 298, 299};
      expect_device_matches_cpu(pool, l, tokens, rows);
    }
  }
}

// A refresh pass, then passes that change only the last rows: the device's cached passes give
// what the CPU's CachedForwarder gives for the same hints (both recompute the same rows).
TEST(CudaForward, CachedPassesMatchTheCpuCachedForwarder) {
  DLOOP_SKIP_WITHOUT_GPU();
  kernels::ThreadPool pool(2);
  for (CacheMode mode : {CacheMode::kPrefix, CacheMode::kDual}) {
    SCOPED_TRACE(cache_mode_name(mode));
    Loaded& l = load(kModels + "llada-f32.gguf");
    ASSERT_TRUE(l.device);
    const int64_t V = l.model->config().n_vocab;
    auto canvas = random_tokens(96, V, 11);
    DirectExecutor exec(*l.model, pool);
    CachedForwarder cpu(*l.model, exec, CacheOptions{mode, nullptr, {}});
    auto gpu = l.device->make_forwarder(mode);
    const auto block = rows_between(64, 80);
    std::vector<float> want(block.size() * static_cast<size_t>(V)), got(want.size());
    PassHint hint;
    hint.refresh = true;
    hint.stable_end = 64;
    hint.live_end = 80;
    for (int step = 0; step < 4; ++step) {
      SCOPED_TRACE(step);
      ASSERT_STATUS_OK(cpu.forward(canvas, block, want.data(), hint));
      ASSERT_STATUS_OK(gpu->forward(canvas, block, got.data(), hint));
      EXPECT_CLOSE(got, want, 1e-4);
      EXPECT_EQ(gpu->stats().rows_computed, cpu.stats().rows_computed);
      hint.refresh = false;
      canvas[static_cast<size_t>(64 + step)] = static_cast<int32_t>((canvas[64 + step] + 1) % V);  // commit a token
    }
  }
}

// The same passes replayed from captured CUDA graphs give the same bits as launched one by one,
// also when the tokens change between replays of one captured shape.
TEST(CudaForward, GraphReplaysEqualDirectLaunches) {
  DLOOP_SKIP_WITHOUT_GPU();
  for (const char* name : {"llada-f32.gguf", "dream-q8_0.gguf"}) {
    SCOPED_TRACE(name);
    Loaded& l = load(kModels + name);
    ASSERT_TRUE(l.device);
    const int64_t V = l.model->config().n_vocab;
    const auto block = rows_between(40, 56);
    std::vector<std::vector<float>> runs[2];
    for (int graphs = 0; graphs < 2; ++graphs) {
      l.device->set_graphs(graphs == 1);
      auto canvas = random_tokens(64, V, 17);
      auto fwd = l.device->make_forwarder(CacheMode::kPrefix);
      PassHint hint;
      hint.refresh = true;
      hint.stable_end = 40;
      for (int step = 0; step < 5; ++step) {
        std::vector<float> logits(block.size() * static_cast<size_t>(V));
        ASSERT_STATUS_OK(fwd->forward(canvas, block, logits.data(), hint));
        runs[graphs].push_back(std::move(logits));
        hint.refresh = false;
        canvas[static_cast<size_t>(40 + step)] = static_cast<int32_t>((canvas[40 + step] + 7) % V);
      }
    }
    l.device->set_graphs(false);
    ASSERT_EQ(runs[0].size(), runs[1].size());
    for (size_t i = 0; i < runs[0].size(); ++i) {
      EXPECT_EQ(0, std::memcmp(runs[0][i].data(), runs[1][i].data(), runs[0][i].size() * sizeof(float))) << "pass " << i;
    }
  }
}

TEST(CudaForward, DeviceChoicesMatchTheCpuLogits) {
  DLOOP_SKIP_WITHOUT_GPU();
  kernels::ThreadPool pool(2);
  Loaded& l = load(kModels + "llada-f32.gguf");
  ASSERT_TRUE(l.device);
  const int64_t V = l.model->config().n_vocab;
  const auto tokens = random_tokens(48, V, 21);
  const auto rows = rows_between(16, 48);
  std::vector<float> logits(rows.size() * static_cast<size_t>(V));
  ForwardState fs;
  ASSERT_STATUS_OK(l.model->forward(pool, tokens, rows, logits.data(), fs));
  auto fwd = l.device->make_forwarder(CacheMode::kNone);
  std::vector<TokenChoice> got(rows.size());
  const int32_t exclude = 5;
  ChoiceOptions greedy;
  greedy.exclude = exclude;
  ASSERT_STATUS_OK(fwd->forward_choices(tokens, rows, greedy, got.data(), PassHint{}));
  for (size_t r = 0; r < rows.size(); ++r) {
    const float* x = logits.data() + r * static_cast<size_t>(V);
    int32_t best = exclude == 0 ? 1 : 0;
    for (int32_t i = 0; i < V; ++i) if (i != exclude && x[i] > x[best]) best = i;
    double s = 0;
    for (int32_t i = 0; i < V; ++i) if (i != exclude) s += std::exp(static_cast<double>(x[i]) - x[best]);
    EXPECT_EQ(got[r].token, best) << "row " << rows[r];
    EXPECT_NEAR(got[r].confidence, 1.0 / s, 1e-4);
  }
}

TEST(CudaForward, BadInputsAreErrorsNamingThePlace) {
  DLOOP_SKIP_WITHOUT_GPU();
  Loaded& l = load(kModels + "llada-f32.gguf");
  ASSERT_TRUE(l.device);
  auto fwd = l.device->make_forwarder(CacheMode::kNone);
  std::vector<int32_t> tokens = {1, 2, 999999, 3};
  std::vector<int32_t> rows = {0};
  std::vector<float> logits(static_cast<size_t>(l.model->config().n_vocab));
  base::Status s = fwd->forward(tokens, rows, logits.data(), PassHint{});
  EXPECT_EQ(s.code(), base::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("position 2"), std::string::npos) << s.message();
  tokens[2] = 4;
  rows = {4};
  s = fwd->forward(tokens, rows, logits.data(), PassHint{});
  EXPECT_EQ(s.code(), base::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("row 4"), std::string::npos) << s.message();
  // The forwarder still works after rejected inputs.
  rows = {3};
  EXPECT_TRUE(fwd->forward(tokens, rows, logits.data(), PassHint{}).ok());
}

// Greedy decoding with f32 weights: the device forwarder's answers are the CPU's, token for token.
TEST(CudaForward, GreedyGenerationsAreIdenticalForF32Weights) {
  DLOOP_SKIP_WITHOUT_GPU();
  kernels::ThreadPool pool(2);
  for (const char* name : {"llada-f32.gguf", "dream-f32.gguf"}) {
    SCOPED_TRACE(name);
    Loaded& l = load(kModels + name);
    ASSERT_TRUE(l.device);
    auto tok = Tokenizer::from_gguf(l.model->file());
    ASSERT_TRUE(tok.ok()) << tok.status().to_string();
    SpecialTokens special{tok->mask_id(), tok->eos_id(), {tok->eos_id()}};
    DecodeOptions o;
    o.gen_length = 32;
    o.steps = 16;
    o.block_length = 16;
    o.eos_stop = false;
    auto prompt = random_tokens(20, l.model->config().n_vocab, 31);
    for (auto& t : prompt) if (t == special.mask) t = 0;
    ForwardState fs;
    DirectForwarder cpu(*l.model, pool, fs);
    auto gpu = l.device->make_forwarder(CacheMode::kNone);
    auto want = decode(*l.model, cpu, prompt, o, special);
    auto got = decode(*l.model, *gpu, prompt, o, special);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(got->answer, want->answer);
    EXPECT_EQ(got->steps, want->steps);
  }
}

// The device's float64 Gumbel-max step against the host reference on the same logits: the same
// tokens (the uniforms come by counter from the same SplitMix64 state), probabilities to 1e-6.
TEST(CudaForward, SampledDeviceChoicesMatchTheHostReference) {
  DLOOP_SKIP_WITHOUT_GPU();
  for (int64_t vocab : {7, 4096, 126464}) {
    const int64_t rows = 5;
    std::mt19937_64 rng(static_cast<uint64_t>(vocab));
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<float> logits(static_cast<size_t>(rows * vocab));
    for (auto& x : logits) x = normal(rng);
    for (double temperature : {0.0, 0.7, 1.5}) {
      ChoiceOptions o;
      o.exclude = 3;
      o.temperature = temperature;
      o.rng_state = 0x1234567890abcdefull + static_cast<uint64_t>(vocab);
      o.draws_per_row = vocab + 1;
      std::vector<TokenChoice> want(static_cast<size_t>(rows));
      reference_choices(logits.data(), rows, vocab, o, want.data());
      kernels::cuda::ChoiceParams params;
      params.exclude = o.exclude;
      params.temperature = o.temperature;
      params.rng_state = o.rng_state;
      params.draws_per_row = o.draws_per_row;
      kernels::cuda::test::DeviceVec<float> dl(logits);
      kernels::cuda::test::DeviceVec<kernels::cuda::TokenChoice> out(static_cast<size_t>(rows));
      ASSERT_STATUS_OK(kernels::cuda::choose_tokens(dl.get(), rows, vocab, params, out.get(), nullptr));
      const auto got = out.download();
      for (int64_t r = 0; r < rows; ++r) {
        SCOPED_TRACE("vocab " + std::to_string(vocab) + " T " + std::to_string(temperature) + " row " +
                     std::to_string(r));
        EXPECT_EQ(got[r].token, want[r].token);
        EXPECT_NEAR(got[r].confidence, want[r].confidence, 1e-6);
        EXPECT_NEAR(got[r].margin, want[r].margin, 1e-6);
        EXPECT_NEAR(got[r].entropy, want[r].entropy, 1e-5 * std::max(1.0f, want[r].entropy));
      }
    }
  }
}

// Sampling and every confidence algorithm with the choice on the device: the answers are the
// CPU decoder's for f32 weights (same seed, same draws).
TEST(CudaForward, SampledGenerationsAreIdenticalForF32Weights) {
  DLOOP_SKIP_WITHOUT_GPU();
  kernels::ThreadPool pool(2);
  Loaded& l = load(kModels + "llada-f32.gguf");
  ASSERT_TRUE(l.device);
  auto tok = Tokenizer::from_gguf(l.model->file());
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  SpecialTokens special{tok->mask_id(), tok->eos_id(), {tok->eos_id()}};
  auto prompt = random_tokens(20, l.model->config().n_vocab, 41);
  for (auto& t : prompt) if (t == special.mask) t = 0;
  for (Algorithm a : {Algorithm::kLowConfidence, Algorithm::kRandom, Algorithm::kTopkMargin, Algorithm::kEntropy}) {
    SCOPED_TRACE(algorithm_name(a));
    DecodeOptions o;
    o.gen_length = 32;
    o.steps = 16;
    o.block_length = 16;
    o.eos_stop = false;
    o.temperature = 0.8;
    o.seed = 77;
    o.algorithm = a;
    if (a == Algorithm::kTopkMargin || a == Algorithm::kEntropy) o.schedule = Schedule::kEps;
    ForwardState fs;
    DirectForwarder cpu(*l.model, pool, fs);
    auto gpu = l.device->make_forwarder(CacheMode::kNone);
    auto want = decode(*l.model, cpu, prompt, o, special);
    auto got = decode(*l.model, *gpu, prompt, o, special);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(got->answer, want->answer);
  }
}

}  // namespace
}  // namespace dloop::engine
