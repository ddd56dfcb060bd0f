// Private helpers shared by the architecture files: typed hyperparameter reads with the
// "{arch}." prefix, and tensor lookups that check shape and type and name the tensor in errors.
// Also the registry that maps general.architecture to a loader (one line per architecture).
#pragma once

#include <string>

#include "dloop/engine/gguf.h"
#include "dloop/engine/model.h"

namespace dloop::engine::detail {

class ArchLoader {
 public:
  ArchLoader(const GgufFile& file, std::string arch) : file_(file), arch_(std::move(arch)) {}

  base::Result<int64_t> u32(const std::string& suffix) const;  // required "{arch}.suffix"
  base::Result<int64_t> u32_or(const std::string& suffix, int64_t fallback) const;
  base::Result<float> f32(const std::string& suffix) const;
  base::Result<float> f32_or(const std::string& suffix, float fallback) const;

  // A 2-D weight with ggml shape {cols, rows}.
  base::Result<kernels::WeightView> matrix(const std::string& name, int64_t rows, int64_t cols) const;
  bool has_tensor(const std::string& name) const { return file_.find_tensor(name) != nullptr; }
  // A 1-D tensor of n elements as f32 (converted into weights.owned when stored in another type).
  base::Result<std::span<const float>> vector(const std::string& name, int64_t n, ModelWeights& weights) const;

  // The shared part of llada and dream: sizes, norms, attention and FFN tensors, output.
  base::Status load_dense(ModelConfig& config, ModelWeights& weights, bool qkv_bias) const;

  const GgufFile& file() const { return file_; }

 private:
  const GgufFile& file_;
  std::string arch_;
};

using ArchLoadFn = base::Status (*)(const ArchLoader& loader, ModelConfig& config, ModelWeights& weights);
struct ArchEntry {
  const char* name;
  ArchLoadFn load;
};

// Defined by the architecture files.
base::Status load_llada(const ArchLoader& loader, ModelConfig& config, ModelWeights& weights);
base::Status load_dream(const ArchLoader& loader, ModelConfig& config, ModelWeights& weights);

}  // namespace dloop::engine::detail
