// The "llada" architecture (LLaDA-8B and the bundled model), as llama.cpp defines it: a
// Llama-style block with bidirectional attention, no biases, RoPE over adjacent pairs (the
// converter permutes q/k rows for it), and no logit shift (diffusion.shift_logits = false).
#include "arch_loader.h"

namespace dloop::engine::detail {

base::Status load_llada(const ArchLoader& loader, ModelConfig& config, ModelWeights& weights) {
  config.rope_type = kernels::RopeType::kNorm;
  DLOOP_RETURN_IF_ERROR(loader.load_dense(config, weights, /*qkv_bias=*/false));
  // llama.cpp's converter writes false; a missing key means shift, as in its sampler.
  if (loader.file().has("diffusion.shift_logits")) {
    DLOOP_ASSIGN_OR_RETURN(config.shift_logits, loader.file().get_bool("diffusion.shift_logits"));
  } else {
    config.shift_logits = true;
  }
  return base::Status();
}

}  // namespace dloop::engine::detail
