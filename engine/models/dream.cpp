// The "dream" architecture (Dream-7B): Qwen2 with bidirectional attention, Q/K/V biases, GQA,
// RoPE over rotate-half pairs (NEOX), and shifted logits (no diffusion.shift_logits key means
// shift, as in llama.cpp's sampler).
#include "arch_loader.h"

namespace dloop::engine::detail {

base::Status load_dream(const ArchLoader& loader, ModelConfig& config, ModelWeights& weights) {
  config.rope_type = kernels::RopeType::kNeox;
  DLOOP_RETURN_IF_ERROR(loader.load_dense(config, weights, /*qkv_bias=*/true));
  config.shift_logits = true;
  if (loader.file().has("diffusion.shift_logits")) {
    DLOOP_ASSIGN_OR_RETURN(config.shift_logits, loader.file().get_bool("diffusion.shift_logits"));
  }
  return base::Status();
}

}  // namespace dloop::engine::detail
