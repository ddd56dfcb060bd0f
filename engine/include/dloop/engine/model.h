// A loaded diffusion LM: hyperparameters (ModelConfig), weights that point into the mmap'd GGUF
// (ModelWeights), and the forward pass over a canvas. Config, weights and preallocated state are
// separate structs so the forward pass is one straight loop over layers that allocates nothing
// once its buffers have grown to the canvas size.
// Thread-safety: a Model is immutable after load and may be shared; each concurrent forward()
// needs its own ForwardState.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dloop/base/status.h"
#include "dloop/engine/gguf.h"
#include "dloop/kernels/attention.h"
#include "dloop/kernels/matmul.h"
#include "dloop/kernels/ops.h"
#include "dloop/kernels/thread_pool.h"

namespace dloop::engine {

struct ModelConfig {
  std::string arch;          // general.architecture: "llada" or "dream"
  std::string name;          // general.name, or the file name
  int64_t n_layer = 0;
  int64_t n_embd = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  int64_t n_ff = 0;
  int64_t n_vocab = 0;
  int64_t n_ctx = 0;         // context_length: the longest canvas the model was trained for
  float rms_eps = 1e-5f;
  float rope_theta = 10000.0f;
  kernels::RopeType rope_type = kernels::RopeType::kNorm;
  bool shift_logits = false;  // logits of canvas position p come from row p-1 (dream)
  int64_t n_params = 0;       // number of weight elements, for reports
  // dloop.tool_call.string_slot_tokens: the string slot width a model trained on the schema-guided
  // decoder's canvas was trained with (the bundled model's recipe writes it); 0 when absent.
  int64_t tool_call_string_slot = 0;
  // dloop.tool_call.member_order: "mention" when the model was trained on tool calls whose
  // arguments follow the order the request mentions their names (the decoder then lays calls out
  // that way, docs/tool-calls.md "Member order"); empty (the schema's order) when absent or "schema".
  std::string tool_call_member_order;
};

struct LayerWeights {
  std::span<const float> attn_norm;  // [n_embd] f32
  kernels::WeightView wq;            // [n_head*head_dim rows x n_embd cols]
  kernels::WeightView wk;            // [n_head_kv*head_dim x n_embd]
  kernels::WeightView wv;            // [n_head_kv*head_dim x n_embd]
  kernels::WeightView wo;            // [n_embd x n_head*head_dim]
  std::span<const float> bq, bk, bv; // optional biases (dream); empty when absent
  std::span<const float> ffn_norm;   // [n_embd] f32
  kernels::WeightView w_gate;        // [n_ff x n_embd]
  kernels::WeightView w_up;          // [n_ff x n_embd]
  kernels::WeightView w_down;        // [n_embd x n_ff]
};

struct ModelWeights {
  kernels::WeightView token_embd;     // [n_vocab rows x n_embd]
  std::span<const float> output_norm; // [n_embd] f32
  kernels::WeightView output;         // [n_vocab x n_embd]; token_embd when tied
  std::vector<LayerWeights> layers;
  std::vector<std::vector<float>> owned;  // f32 copies of small tensors stored in other types
};

// Activation buffers for one forward pass over up to `capacity` canvas positions.
struct ForwardState {
  int64_t capacity = 0;
  std::vector<float> x;      // [T x n_embd] residual stream
  std::vector<float> xn;     // [T x n_embd] normalised input of a sub-layer
  std::vector<float> q;      // [T x n_head*head_dim]
  std::vector<float> k;      // [T x n_head_kv*head_dim]
  std::vector<float> v;      // [T x n_head_kv*head_dim]
  std::vector<float> attn;   // [T x n_head*head_dim] attention output before wo
  std::vector<float> proj;   // [T x n_embd] wo or w_down output
  std::vector<float> gate;   // [T x n_ff]
  std::vector<float> up;     // [T x n_ff]
  std::vector<float> rows;   // [R x n_embd] final hidden rows whose logits are wanted
  std::vector<int32_t> positions;  // [T] 0..T-1
};

class Model {
 public:
  // Loads the architecture named by general.architecture. Errors name the missing or misshapen
  // key or tensor. The GgufFile must outlive nothing: the Model keeps it alive.
  static base::Result<std::unique_ptr<Model>> load(std::shared_ptr<const GgufFile> file);

  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  const GgufFile& file() const { return *file_; }

  // Runs the network over the canvas `tokens` (positions 0..n-1) and writes the logits of the
  // output rows listed in `rows` (row indices before any logit shift) to
  // logits[rows.size() x n_vocab]. Token ids must be < n_vocab (checked: invalid_argument).
  base::Status forward(kernels::ThreadPool& pool, std::span<const int32_t> tokens,
                       std::span<const int32_t> rows, float* logits, ForwardState& state) const;

  Model(std::shared_ptr<const GgufFile> file, ModelConfig config, ModelWeights weights)
      : file_(std::move(file)), config_(std::move(config)), weights_(std::move(weights)) {}

 private:
  std::shared_ptr<const GgufFile> file_;
  ModelConfig config_;
  ModelWeights weights_;
};

// Names of the architectures this build can load.
std::vector<std::string> supported_architectures();

}  // namespace dloop::engine
