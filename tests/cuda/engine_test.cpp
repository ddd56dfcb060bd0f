// The Engine on the CUDA backend: cross-request batching (DeviceBatch: the passes of several
// requests packed into one device pass) and prompt reuse with the prompt K/V kept in device
// memory (the PromptCache's device key space), against the same requests alone and against the
// CPU engine. On the GPU a batched pass may run a different cuBLAS kernel than a pass alone (the
// row count differs), so logits agree to f32 rounding (1e-4 of the largest logit), not bit for
// bit; greedy generations of the f32 test models are identical.
// Label gpu: skipped when no device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include "cuda_test_util.h"
#include "dloop/engine/device.h"
#include "dloop/engine/engine.h"
#include "dloop/engine/tool_call.h"
#include "../engine/device_requests.h"

namespace dloop::engine {
namespace {

const std::string kModels = std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/";

std::unique_ptr<Engine> open_engine(Device device) {
  EngineOptions o;
  o.model_path = kModels + "llada-f32.gguf";
  o.threads = 2;
  o.device = device;
  auto e = Engine::open(o);
  EXPECT_TRUE(e.ok()) << e.status().to_string();
  return e.ok() ? std::move(e).value() : nullptr;
}

TEST(CudaEngine, BatchedRequestsEqualEachAloneAndTheCpu) {
  DLOOP_SKIP_WITHOUT_GPU();
  auto gpu = open_engine(Device::kCuda);
  auto cpu = open_engine(Device::kCpu);
  ASSERT_TRUE(gpu && cpu);
  const std::vector<GenerateRequest> reqs = test::device_requests(4, PromptReuse::kOff, false);
  auto batched = gpu->generate_batch(reqs);
  ASSERT_EQ(batched.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    SCOPED_TRACE(i);
    auto alone = gpu->generate(reqs[i]);
    auto reference = cpu->generate(reqs[i]);
    ASSERT_TRUE(batched[i].ok()) << batched[i].status().to_string();
    ASSERT_TRUE(alone.ok() && reference.ok());
    EXPECT_EQ(batched[i]->output_tokens, alone->output_tokens);
    EXPECT_EQ(batched[i]->output_tokens, reference->output_tokens);
    EXPECT_EQ(batched[i]->steps, alone->steps);
  }
}

TEST(CudaEngine, FailingRequestInABatchDoesNotDisturbTheOthers) {
  DLOOP_SKIP_WITHOUT_GPU();
  auto gpu = open_engine(Device::kCuda);
  ASSERT_TRUE(gpu);
  std::vector<GenerateRequest> reqs = test::device_requests(4, PromptReuse::kOff, false);
  reqs[1].decode.gen_length = 4096;  // over the model's context
  auto batched = gpu->generate_batch(reqs);
  ASSERT_EQ(batched.size(), reqs.size());
  EXPECT_FALSE(batched[1].ok());
  for (size_t i : {0u, 2u, 3u}) {
    ASSERT_TRUE(batched[i].ok()) << batched[i].status().to_string();
    auto alone = gpu->generate(reqs[i]);
    ASSERT_TRUE(alone.ok());
    EXPECT_EQ(batched[i]->output_tokens, alone->output_tokens);
  }
}

// Two requests' forwarders submitting to one DeviceBatch get the logits they get alone.
TEST(CudaEngine, DeviceBatchLogitsMatchPassesAlone) {
  DLOOP_SKIP_WITHOUT_GPU();
  auto gpu = open_engine(Device::kCuda);
  ASSERT_TRUE(gpu);
  DeviceModel& dev = *gpu->device_model();
  const int64_t V = gpu->model().config().n_vocab;
  std::mt19937_64 rng(5);
  std::vector<std::vector<int32_t>> canvases;
  for (size_t len : {40u, 17u, 64u}) {
    std::vector<int32_t> c(len);
    for (auto& t : c) t = static_cast<int32_t>(rng() % static_cast<uint64_t>(V));
    canvases.push_back(c);
  }
  auto rows_of = [](const std::vector<int32_t>& c) {
    return std::vector<int32_t>{0, static_cast<int32_t>(c.size() / 2), static_cast<int32_t>(c.size() - 1)};
  };
  std::vector<std::vector<float>> alone(canvases.size()), together(canvases.size());
  for (size_t i = 0; i < canvases.size(); ++i) {
    auto f = dev.make_forwarder(CacheMode::kNone);
    alone[i].resize(3 * static_cast<size_t>(V));
    ASSERT_TRUE(f->forward(canvases[i], rows_of(canvases[i]), alone[i].data(), PassHint{}).ok());
  }
  auto batch = dev.make_batch(static_cast<int>(canvases.size()));
  std::vector<base::Status> status(canvases.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < canvases.size(); ++i) {
    threads.emplace_back([&, i] {
      DeviceForwarderOptions o;
      o.batch = batch.get();
      auto f = dev.make_forwarder(o);
      together[i].resize(3 * static_cast<size_t>(V));
      status[i] = f->forward(canvases[i], rows_of(canvases[i]), together[i].data(), PassHint{});
      batch->leave();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(batch->stats().batches, 1);
  EXPECT_EQ(batch->stats().max_batch, 3);
  for (size_t i = 0; i < canvases.size(); ++i) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(status[i].ok()) << status[i].to_string();
    float scale = 0, err = 0;
    for (size_t j = 0; j < alone[i].size(); ++j) {
      scale = std::max(scale, std::fabs(alone[i][j]));
      err = std::max(err, std::fabs(alone[i][j] - together[i][j]));
    }
    EXPECT_LE(err, 1e-4f * scale);
  }
}

// Prompt reuse on the device: the second request takes the system turn's K/V from the cache
// (device rows) and answers as the first (a miss) and as the CPU engine with the same reuse.
TEST(CudaEngine, PromptReuseHitEqualsMissAndTheCpu) {
  DLOOP_SKIP_WITHOUT_GPU();
  auto gpu = open_engine(Device::kCuda);
  auto cpu = open_engine(Device::kCpu);
  ASSERT_TRUE(gpu && cpu);
  GenerateRequest req = test::device_requests(1, PromptReuse::kTurns, false)[0];
  for (CacheMode mode : {CacheMode::kNone, CacheMode::kPrefix, CacheMode::kDual}) {
    SCOPED_TRACE(cache_mode_name(mode));
    req.decode.cache = mode;
    auto first = gpu->generate(req);
    auto second = gpu->generate(req);
    auto reference = cpu->generate(req);
    ASSERT_TRUE(first.ok() && second.ok() && reference.ok());
    EXPECT_EQ(first->output_tokens, second->output_tokens);
    EXPECT_EQ(first->output_tokens, reference->output_tokens);
    EXPECT_GT(second->forward_stats.prompt_rows_reused, 0);
  }
  const PromptCacheStats s = gpu->prompt_cache_stats();
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.hits, 5);
  EXPECT_GT(s.bytes, 0u);
  // Batched requests share the cached segments too.
  const std::vector<GenerateRequest> reqs = test::device_requests(4, PromptReuse::kSystem, false);
  auto batched = gpu->generate_batch(reqs);
  for (size_t i = 0; i < reqs.size(); ++i) {
    ASSERT_TRUE(batched[i].ok()) << batched[i].status().to_string();
    auto reference = cpu->generate(reqs[i]);
    ASSERT_TRUE(reference.ok());
    EXPECT_EQ(batched[i]->output_tokens, reference->output_tokens);
  }
  EXPECT_GT(gpu->prompt_cache_stats().hits, 5);
}

TEST(CudaEngine, ToolCallBatchEqualsEachAlone) {
  DLOOP_SKIP_WITHOUT_GPU();
  auto gpu = open_engine(Device::kCuda);
  ASSERT_TRUE(gpu);
  const std::vector<ToolCallRequest> reqs = test::device_tool_requests(3);
  auto batched = gpu->tool_call_batch(reqs);
  for (size_t i = 0; i < reqs.size(); ++i) {
    SCOPED_TRACE(i);
    auto alone = gpu->tool_call(reqs[i]);
    ASSERT_TRUE(batched[i].ok() && alone.ok());
    DLOOP_EXPECT_SAME_TOOL_CALL(*batched[i], *alone);
  }
}

}  // namespace
}  // namespace dloop::engine
