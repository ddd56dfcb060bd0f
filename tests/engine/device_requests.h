// Requests of the device-path engine tests (tests/engine/device_engine_test.cpp on the CPU,
// tests/cuda/engine_test.cpp on a GPU), for the 256-token test models: short raw chat prompts
// with one shared system turn (so prompt reuse has a segment to keep), every cache mode, and
// tool calls without rendered tools (their schemas alone would overflow the context).
#pragma once

#include <string>
#include <vector>

#include "dloop/engine/engine.h"
#include "dloop/engine/tool_call.h"

namespace dloop::engine::test {

inline std::string chat_prompt(const std::string& system, const std::string& user) {
  std::string p = system.empty() ? "" : "<|im_start|>system\n" + system + "<|im_end|>\n";
  return p + "<|im_start|>user\n" + user + "<|im_end|>\n<|im_start|>assistant\n";
}

// n requests (at most 4): answers of 8 + 8 i tokens, cache none/prefix/dual/prefix, greedy except
// request 2, sampled at temperature 0.8 when `sample_third`.
inline std::vector<GenerateRequest> device_requests(int n, PromptReuse reuse, bool sample_third) {
  const char* users[] = {"hello there", "list the files in the current folder please", "what is two plus two",
                         "write a haiku about the sea"};
  const CacheMode modes[] = {CacheMode::kNone, CacheMode::kPrefix, CacheMode::kDual, CacheMode::kPrefix};
  std::vector<GenerateRequest> out;
  for (int i = 0; i < n && i < 4; ++i) {
    GenerateRequest r;
    r.raw_prompt = chat_prompt("You are terse.", users[i]);
    r.decode.gen_length = 8 + 8 * i;
    r.decode.steps = r.decode.gen_length;
    r.decode.block_length = 8;
    r.decode.eos_stop = false;
    r.decode.cache = modes[i];
    r.decode.prompt_reuse = reuse;
    if (i == 2 && sample_third) r.decode.temperature = 0.8;
    out.push_back(r);
  }
  return out;
}

inline std::vector<ToolCallRequest> device_tool_requests(int n) {
  const char* users[] = {"read the file notes.txt", "say hello", "add 2 and 3"};
  std::vector<ToolCallRequest> out(static_cast<size_t>(std::min(n, 3)));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].raw_prompt = chat_prompt("", users[i]);
    out[i].answer_length = 48;
    out[i].tools = {ToolDefinition{"read_file", "Read a file.",
                                   base::Json::parse(R"({"type": "object", "properties": {"path": {"type": "string"}},
                                                         "required": ["path"]})").value()}};
  }
  return out;
}

// The fields of two tool-call results that must agree.
#define DLOOP_EXPECT_SAME_TOOL_CALL(a, b)    \
  do {                                       \
    EXPECT_EQ((a).is_call, (b).is_call);     \
    EXPECT_EQ((a).name, (b).name);           \
    EXPECT_EQ((a).arguments, (b).arguments); \
    EXPECT_EQ((a).answer, (b).answer);       \
  } while (0)

}  // namespace dloop::engine::test
