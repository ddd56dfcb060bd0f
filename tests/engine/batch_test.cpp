// Cross-request batching: Engine::generate_batch and tool_call_batch give each request exactly
// the result it gets alone, on random models of several shapes (MHA and GQA, llada and dream,
// f32 and q8_0), with prompts and answer lengths that differ between the requests, with the
// caches off and on, and with requests that fail in the middle of a batch.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "dloop/engine/engine.h"
#include "dloop/engine/random_model.h"
#include "dloop/engine/tool_call.h"

namespace dloop::engine {
namespace {

std::unique_ptr<Engine> random_engine(const std::string& arch, int64_t n_head_kv, kernels::DType type) {
  RandomModelSpec spec;
  spec.name = "batch-" + arch;
  spec.arch = arch;
  spec.n_layer = 2;
  spec.n_embd = 64;
  spec.n_head = 4;
  spec.n_head_kv = n_head_kv;
  spec.n_ff = 128;
  spec.n_vocab = 512;
  spec.n_ctx = 1024;
  spec.type = type;
  spec.seed = 11;
  // One file per process: ctest -j runs this file's tests as parallel processes, and rewriting a
  // file another process has mapped is a SIGBUS there. Unlinked once open (the mapping stays).
  const std::string path = testing::TempDir() + "/" + spec.name + "-" + std::to_string(n_head_kv) + "-" +
                           kernels::dtype_info(type).name + "-" + std::to_string(getpid()) + ".gguf";
  EXPECT_TRUE(write_random_model(spec, path).ok());
  auto e = Engine::open({path, 2, {}});
  EXPECT_TRUE(e.ok()) << e.status().message();
  std::remove(path.c_str());
  return std::move(e).value();
}

std::vector<GenerateRequest> requests(int n) {
  std::vector<GenerateRequest> out;
  const int64_t lens[] = {16, 32, 8, 24};
  for (int i = 0; i < n; ++i) {
    GenerateRequest r;
    r.raw_prompt = "<|im_start|>system\nShared instructions.<|im_end|>\n<|im_start|>user\nrequest " +
                   std::string(static_cast<size_t>(i * 3 % 11), 'x') + std::to_string(i) +
                   "<|im_end|>\n<|im_start|>assistant\n";
    r.decode.gen_length = lens[i % 4];
    r.decode.block_length = 8;
    r.decode.steps = r.decode.gen_length / (i % 2 == 0 ? 1 : 2);
    if (i % 3 == 1) r.decode.threshold = 0.2;
    if (i % 5 == 4) {
      r.decode.temperature = 0.8;
      r.decode.seed = static_cast<uint64_t>(i);
    }
    r.decode.eos_stop = i % 2 == 0;
    out.push_back(std::move(r));
  }
  return out;
}

struct Shape {
  const char* arch;
  int64_t n_head_kv;
  kernels::DType type;
};

TEST(Batch, GenerateEqualsEachAlone) {
  const Shape shapes[] = {{"llada", 4, kernels::DType::kF32}, {"llada", 2, kernels::DType::kQ8_0},
                          {"dream", 2, kernels::DType::kF32}};
  for (const Shape& sh : shapes) {
    SCOPED_TRACE(std::string(sh.arch) + " kv heads " + std::to_string(sh.n_head_kv));
    auto engine = random_engine(sh.arch, sh.n_head_kv, sh.type);
    for (CacheMode mode : {CacheMode::kNone, CacheMode::kPrefix, CacheMode::kDual}) {
      for (PromptReuse reuse : {PromptReuse::kOff, PromptReuse::kTurns}) {
        if (mode == CacheMode::kDual && reuse == PromptReuse::kOff && sh.type != kernels::DType::kF32) continue;
        SCOPED_TRACE(std::string(cache_mode_name(mode)) + " / " + prompt_reuse_name(reuse));
        for (int n : {1, 3, 7}) {
          auto reqs = requests(n);
          for (auto& r : reqs) {
            r.decode.cache = mode;
            r.decode.prompt_reuse = reuse;
          }
          engine->prompt_cache().clear();
          auto batched = engine->generate_batch(reqs);
          ASSERT_EQ(batched.size(), reqs.size());
          for (int i = 0; i < n; ++i) {
            auto alone = engine->generate(reqs[i]);
            ASSERT_TRUE(alone.ok()) << alone.status().message();
            ASSERT_TRUE(batched[i].ok()) << batched[i].status().message();
            EXPECT_EQ(batched[i]->output_tokens, alone->output_tokens) << "request " << i << " of " << n;
            EXPECT_EQ(batched[i]->forward_passes, alone->forward_passes);
          }
        }
      }
    }
  }
}

TEST(Batch, FailingRequestDoesNotDisturbTheOthers) {
  auto engine = random_engine("llada", 4, kernels::DType::kF32);
  auto reqs = requests(4);
  reqs[1].decode.gen_length = 2000;  // over the 1024-token context
  reqs[2].decode.block_length = 7;   // not a divisor of gen_length
  auto batched = engine->generate_batch(reqs);
  ASSERT_FALSE(batched[1].ok());
  EXPECT_NE(batched[1].status().message().find("context length"), std::string::npos) << batched[1].status().message();
  ASSERT_FALSE(batched[2].ok());
  EXPECT_NE(batched[2].status().message().find("block_length"), std::string::npos);
  for (int i : {0, 3}) {
    auto alone = engine->generate(reqs[static_cast<size_t>(i)]);
    ASSERT_TRUE(alone.ok() && batched[static_cast<size_t>(i)].ok());
    EXPECT_EQ(batched[static_cast<size_t>(i)]->output_tokens, alone->output_tokens);
  }
  EXPECT_TRUE(engine->generate_batch({}).empty());
}

base::Json schema() {
  auto j = base::Json::parse(R"({"type": "object", "properties": {"city": {"type": "string", "maxLength": 8},
      "days": {"type": "integer", "minimum": 1, "maximum": 7}, "units": {"enum": ["c", "f"]}},
      "required": ["city", "days"]})");
  EXPECT_TRUE(j.ok());
  return *j;
}

TEST(Batch, ToolCallEqualsEachAlone) {
  auto engine = random_engine("llada", 2, kernels::DType::kF32);
  std::vector<ToolCallRequest> reqs;
  const ReasoningEffort efforts[] = {ReasoningEffort::kInstant, ReasoningEffort::kLow, ReasoningEffort::kMedium,
                                     ReasoningEffort::kHigh};
  for (int i = 0; i < 6; ++i) {
    ToolCallRequest r;
    r.messages = {{"system", "You call tools."}, {"user", "weather in city " + std::to_string(i)}};
    r.tools = {{"get_weather", "Get the weather.", schema()}, {"get_time", "Get the time.", schema()}};
    r.tool_choice = i % 3 == 0 ? ToolChoice{ToolChoice::Kind::kRequired, ""} : ToolChoice{};
    r.effort = efforts[i % 4];
    r.answer_length = 48;
    r.string_slot_tokens = 8;
    r.number_slot_tokens = 4;
    r.cache = i % 2 == 0 ? CacheMode::kPrefix : CacheMode::kNone;
    r.prompt_reuse = i % 3 == 2 ? PromptReuse::kTurns : PromptReuse::kOff;
    reqs.push_back(std::move(r));
  }
  auto batched = engine->tool_call_batch(reqs);
  ASSERT_EQ(batched.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    auto alone = engine->tool_call(reqs[i]);
    ASSERT_TRUE(alone.ok()) << alone.status().message();
    ASSERT_TRUE(batched[i].ok()) << batched[i].status().message();
    EXPECT_EQ(batched[i]->is_call, alone->is_call) << i;
    EXPECT_EQ(batched[i]->name, alone->name) << i;
    EXPECT_EQ(batched[i]->arguments, alone->arguments) << i;
    EXPECT_EQ(batched[i]->answer, alone->answer) << i;
    EXPECT_EQ(batched[i]->forward_passes, alone->forward_passes) << i;
  }
}

}  // namespace
}  // namespace dloop::engine
