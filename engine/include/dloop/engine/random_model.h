// Random-weight models in llama.cpp's GGUF conventions, for benchmarks and tests: the shapes of
// real models (tiny, small, ~0.5B, LLaDA-8B) without any download. Weights are drawn from a
// seeded generator with a 1/sqrt(fan-in) scale; the vocabulary is the 256 byte tokens, padding
// tokens and the special tokens a diffusion model needs (EOS, mask, ChatML markers).
// Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dloop/base/status.h"
#include "dloop/kernels/dtype.h"

namespace dloop::engine {

struct RandomModelSpec {
  std::string name = "tiny";
  std::string arch = "llada";   // "llada" or "dream"
  int64_t n_layer = 4;
  int64_t n_embd = 256;
  int64_t n_head = 4;
  int64_t n_head_kv = 4;
  int64_t n_ff = 704;
  int64_t n_vocab = 4096;
  int64_t n_ctx = 4096;
  kernels::DType type = kernels::DType::kF32;  // F32, F16, BF16 or Q8_0 for the matrices
  uint64_t seed = 1;
  int64_t tool_call_string_slot = 0;  // > 0: written as dloop.tool_call.string_slot_tokens
  std::string tool_call_member_order;  // non-empty: written as dloop.tool_call.member_order

  int64_t n_params() const;
};

// "tiny" (4 layers, 256, 4 heads, FFN 704, vocab 4096), "small" (12, 768, 12, 2048, 32000),
// "0.5b" (24, 1280, 20, 3456, 32000), "llada-8b" (32, 4096, 32, 12288, 126464).
std::optional<RandomModelSpec> random_model_preset(const std::string& name);
std::vector<std::string> random_model_preset_names();

// Writes the model to `path`. Errors: invalid_argument for shapes the type cannot hold,
// io_error.
base::Status write_random_model(const RandomModelSpec& spec, const std::string& path);

// Conversions used to fill typed weights (round to nearest even).
uint16_t f32_to_f16(float v);
uint16_t f32_to_bf16(float v);

}  // namespace dloop::engine
