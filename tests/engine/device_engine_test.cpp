// The Engine's device plumbing on every machine: a DeviceModel that computes on the CPU
// (CachedForwarder over forward_batch, token choice by reference_choices) is registered as the
// "cuda" backend of this test binary, so Engine::open(device cuda) takes the device path of
// generate, generate_batch and tool_call_batch: forwarders made from DeviceForwarderOptions (the
// cache mode, the PromptCache and the prompt's segment ends), one DeviceBatch per batch call with
// a DeviceBatchMember per request thread, passes submitted through the batch's PassBarrier. The
// answers must equal the CPU engine's, the batch must have packed the requests' passes, and
// prompt reuse must have reached the device forwarders. The GPU itself: tests/cuda/engine_test.cpp.
#include <gtest/gtest.h>

#include <atomic>

#include "dloop/engine/batch.h"
#include "dloop/engine/device.h"
#include "dloop/engine/engine.h"
#include "dloop/engine/tool_call.h"
#include "device_requests.h"

namespace dloop::engine {
namespace {

const std::string kModels = std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/";

std::atomic<int64_t> g_batched_passes{0};   // passes run by a HostBatch
std::atomic<int64_t> g_max_batch{0};
std::atomic<int64_t> g_reuse_forwarders{0}; // forwarders made with a prompt cache and segment ends
std::atomic<int64_t> g_choice_passes{0};

class HostBatch final : public DeviceBatch {
 public:
  HostBatch(const Model& model, kernels::ThreadPool& pool, int members)
      : model_(model), pool_(pool), barrier_(members, [this](std::span<SequencePass* const> p) { run(p); }) {}
  void leave() override { barrier_.leave(); }
  BatchStats stats() const override { return barrier_.stats(); }
  base::Status submit(SequencePass& pass) { return barrier_.submit(pass); }

 private:
  void run(std::span<SequencePass* const> pending) {
    std::vector<SequencePass> passes;
    for (SequencePass* p : pending) passes.push_back(*p);
    (void)forward_batch(model_, pool_, passes, state_);
    for (size_t i = 0; i < pending.size(); ++i) pending[i]->status = passes[i].status;
    g_batched_passes += static_cast<int64_t>(pending.size());
    int64_t seen = g_max_batch.load();
    while (static_cast<int64_t>(pending.size()) > seen && !g_max_batch.compare_exchange_weak(seen, pending.size())) {
    }
  }
  const Model& model_;
  kernels::ThreadPool& pool_;
  BatchState state_;
  PassBarrier<SequencePass> barrier_;
};

// Submits a forwarder's passes to a HostBatch.
class BatchExecutor final : public PassExecutor {
 public:
  explicit BatchExecutor(HostBatch& batch) : batch_(batch) {}
  base::Status run(SequencePass& pass) override { return batch_.submit(pass); }

 private:
  HostBatch& batch_;
};

class HostDeviceForwarder final : public DeviceForwarder {
 public:
  HostDeviceForwarder(const Model& model, kernels::ThreadPool& pool, const DeviceForwarderOptions& o)
      : model_(model), direct_(model, pool) {
    PassExecutor* exec = &direct_;
    if (o.batch != nullptr) {
      batch_exec_ = std::make_unique<BatchExecutor>(static_cast<HostBatch&>(*o.batch));
      exec = batch_exec_.get();
    }
    CacheOptions c;
    c.mode = o.mode;
    c.prompt_cache = o.prompt_cache;
    c.segment_ends = o.segment_ends;
    if (o.prompt_cache != nullptr && !o.segment_ends.empty()) ++g_reuse_forwarders;
    inner_ = std::make_unique<CachedForwarder>(model, *exec, std::move(c));
  }
  base::Status forward(std::span<const int32_t> canvas, std::span<const int32_t> rows, float* logits,
                       const PassHint& hint, int stream) override {
    DLOOP_RETURN_IF_ERROR(inner_->forward(canvas, rows, logits, hint, stream));
    stats_ = inner_->stats();
    return base::Status();
  }
  base::Status forward_choices(std::span<const int32_t> canvas, std::span<const int32_t> rows,
                               const ChoiceOptions& choice, TokenChoice* out, const PassHint& hint,
                               int stream) override {
    const int64_t V = model_.config().n_vocab;
    logits_.resize(rows.size() * static_cast<size_t>(V));
    DLOOP_RETURN_IF_ERROR(forward(canvas, rows, logits_.data(), hint, stream));
    reference_choices(logits_.data(), static_cast<int64_t>(rows.size()), V, choice, out);
    ++g_choice_passes;
    return base::Status();
  }

 private:
  const Model& model_;
  DirectExecutor direct_;
  std::unique_ptr<BatchExecutor> batch_exec_;
  std::unique_ptr<CachedForwarder> inner_;
  std::vector<float> logits_;
};

class HostDeviceModel final : public DeviceModel {
 public:
  explicit HostDeviceModel(const Model& model) : model_(model) {}
  using DeviceModel::make_forwarder;
  std::unique_ptr<DeviceForwarder> make_forwarder(const DeviceForwarderOptions& o) override {
    return std::make_unique<HostDeviceForwarder>(model_, pool_, o);
  }
  std::unique_ptr<DeviceBatch> make_batch(int members) override {
    return std::make_unique<HostBatch>(model_, pool_, members);
  }
  std::string description() const override { return "host test device"; }
  uint64_t weight_bytes() const override { return 0; }
  uint64_t pass_weight_bytes() const override { return 0; }
  base::Result<double> copy_bandwidth(uint64_t) override { return base::unavailable("host test device"); }
  void set_graphs(bool) override {}

 private:
  const Model& model_;
  kernels::ThreadPool pool_{1};
};

base::Result<std::unique_ptr<DeviceModel>> host_factory(const Model& model) {
  return std::unique_ptr<DeviceModel>(std::make_unique<HostDeviceModel>(model));
}

std::unique_ptr<Engine> open_engine(Device device) {
  register_device_backend(Device::kCuda, &host_factory);
  EngineOptions o;
  o.model_path = kModels + "llada-f32.gguf";
  o.threads = 1;
  o.device = device;
  auto e = Engine::open(o);
  EXPECT_TRUE(e.ok()) << e.status().to_string();
  return e.ok() ? std::move(e).value() : nullptr;
}

TEST(DeviceEngine, BatchGoesThroughTheDeviceBatchAndEqualsTheCpu) {
  auto dev = open_engine(Device::kCuda);
  auto cpu = open_engine(Device::kCpu);
  ASSERT_TRUE(dev && cpu);
  ASSERT_NE(dev->device_model(), nullptr);
  EXPECT_EQ(dev->device_model()->description(), "host test device");
  const auto reqs = test::device_requests(3, PromptReuse::kOff, true);
  g_batched_passes = 0;
  g_max_batch = 0;
  g_choice_passes = 0;
  auto batched = dev->generate_batch(reqs);
  ASSERT_EQ(batched.size(), reqs.size());
  EXPECT_EQ(g_max_batch.load(), 3);          // the three requests' passes ran together
  EXPECT_GT(g_batched_passes.load(), 16);    // every pass of every request went through the batch
  EXPECT_GT(g_choice_passes.load(), 0);      // and the decoder took the device choice path
  for (size_t i = 0; i < reqs.size(); ++i) {
    SCOPED_TRACE(i);
    auto want = cpu->generate(reqs[i]);
    auto alone = dev->generate(reqs[i]);
    ASSERT_TRUE(batched[i].ok()) << batched[i].status().to_string();
    ASSERT_TRUE(want.ok() && alone.ok());
    EXPECT_EQ(batched[i]->output_tokens, want->output_tokens);
    EXPECT_EQ(alone->output_tokens, want->output_tokens);
  }
}

TEST(DeviceEngine, PromptReuseReachesTheDeviceForwarders) {
  auto dev = open_engine(Device::kCuda);
  auto cpu = open_engine(Device::kCpu);
  ASSERT_TRUE(dev && cpu);
  const auto reqs = test::device_requests(3, PromptReuse::kSystem, true);
  g_reuse_forwarders = 0;
  auto first = dev->generate(reqs[0]);
  auto second = dev->generate(reqs[0]);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(g_reuse_forwarders.load(), 2);
  EXPECT_EQ(first->output_tokens, second->output_tokens);
  EXPECT_GT(second->forward_stats.prompt_rows_reused, 0);
  EXPECT_EQ(dev->prompt_cache_stats().hits, 1);
  // Off: no prompt cache for the device forwarder.
  GenerateRequest off = reqs[0];
  off.decode.prompt_reuse = PromptReuse::kOff;
  ASSERT_TRUE(dev->generate(off).ok());
  EXPECT_EQ(g_reuse_forwarders.load(), 2);
  // Batched, every request finds the system turn cached.
  auto batched = dev->generate_batch(reqs);
  for (size_t i = 0; i < reqs.size(); ++i) {
    auto want = cpu->generate(reqs[i]);
    ASSERT_TRUE(batched[i].ok() && want.ok());
    EXPECT_EQ(batched[i]->output_tokens, want->output_tokens);
    EXPECT_GT(batched[i]->forward_stats.prompt_rows_reused, 0);
  }
}

TEST(DeviceEngine, ToolCallBatchOnTheDeviceEqualsTheCpu) {
  auto dev = open_engine(Device::kCuda);
  auto cpu = open_engine(Device::kCpu);
  ASSERT_TRUE(dev && cpu);
  const std::vector<ToolCallRequest> reqs = test::device_tool_requests(2);
  g_max_batch = 0;
  auto batched = dev->tool_call_batch(reqs);
  EXPECT_EQ(g_max_batch.load(), 2);
  for (size_t i = 0; i < reqs.size(); ++i) {
    SCOPED_TRACE(i);
    auto want = cpu->tool_call(reqs[i]);
    ASSERT_TRUE(batched[i].ok()) << batched[i].status().to_string();
    ASSERT_TRUE(want.ok());
    DLOOP_EXPECT_SAME_TOOL_CALL(*batched[i], *want);
  }
}

}  // namespace
}  // namespace dloop::engine
