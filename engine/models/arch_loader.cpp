// Shared loading helpers for the dense diffusion architectures, and the architecture registry.
#include "arch_loader.h"

#include <cmath>

#include "dloop/kernels/dtype.h"

namespace dloop::engine {
namespace detail {
namespace {

// The registry: a new architecture is a new file plus one line here.
constexpr ArchEntry kArchitectures[] = {
    {"llada", &load_llada},
    {"dream", &load_dream},
};

std::string shape_text(const GgufTensor& t) {
  std::string s = "{";
  for (int i = 0; i < t.n_dims; ++i) s += (i ? ", " : "") + std::to_string(t.ne[i]);
  return s + "}";
}

}  // namespace

base::Result<int64_t> ArchLoader::u32(const std::string& suffix) const {
  auto v = file_.get_u32(arch_ + "." + suffix);
  if (!v.ok()) return v.status();
  return static_cast<int64_t>(*v);
}

base::Result<int64_t> ArchLoader::u32_or(const std::string& suffix, int64_t fallback) const {
  if (!file_.has(arch_ + "." + suffix)) return fallback;
  return u32(suffix);
}

base::Result<float> ArchLoader::f32(const std::string& suffix) const { return file_.get_f32(arch_ + "." + suffix); }

base::Result<float> ArchLoader::f32_or(const std::string& suffix, float fallback) const {
  if (!file_.has(arch_ + "." + suffix)) return fallback;
  return f32(suffix);
}

base::Result<kernels::WeightView> ArchLoader::matrix(const std::string& name, int64_t rows, int64_t cols) const {
  const GgufTensor* t = file_.find_tensor(name);
  if (t == nullptr) return base::not_found("tensor '" + name + "' is missing");
  bool two_d = t->n_dims == 2 || (t->n_dims > 2 && t->ne[2] == 1 && (t->n_dims < 4 || t->ne[3] == 1));
  if (!two_d || t->ne[0] != cols || t->ne[1] != rows) {
    return base::invalid_argument("tensor '" + name + "' has shape " + shape_text(*t) + ", expected {" +
                                  std::to_string(cols) + ", " + std::to_string(rows) + "}");
  }
  return kernels::WeightView{t->data, t->type, rows, cols};
}

base::Result<std::span<const float>> ArchLoader::vector(const std::string& name, int64_t n,
                                                        ModelWeights& weights) const {
  const GgufTensor* t = file_.find_tensor(name);
  if (t == nullptr) return base::not_found("tensor '" + name + "' is missing");
  if (t->ne[0] != n || t->n_dims < 1 || (t->n_dims >= 2 && t->ne[1] != 1)) {
    return base::invalid_argument("tensor '" + name + "' has shape " + shape_text(*t) + ", expected {" +
                                  std::to_string(n) + "}");
  }
  if (t->type == kernels::DType::kF32) return std::span<const float>(reinterpret_cast<const float*>(t->data), size_t(n));
  std::vector<float>& copy = weights.owned.emplace_back(size_t(n));
  kernels::dequantize_row(t->type, t->data, copy.data(), n);
  return std::span<const float>(copy);
}

base::Status ArchLoader::load_dense(ModelConfig& c, ModelWeights& w, bool qkv_bias) const {
  DLOOP_ASSIGN_OR_RETURN(c.n_layer, u32("block_count"));
  DLOOP_ASSIGN_OR_RETURN(c.n_embd, u32("embedding_length"));
  DLOOP_ASSIGN_OR_RETURN(c.n_ff, u32("feed_forward_length"));
  DLOOP_ASSIGN_OR_RETURN(c.n_head, u32("attention.head_count"));
  DLOOP_ASSIGN_OR_RETURN(c.n_head_kv, u32_or("attention.head_count_kv", c.n_head));
  DLOOP_ASSIGN_OR_RETURN(c.n_ctx, u32_or("context_length", 4096));
  DLOOP_ASSIGN_OR_RETURN(c.rms_eps, f32("attention.layer_norm_rms_epsilon"));
  DLOOP_ASSIGN_OR_RETURN(c.rope_theta, f32_or("rope.freq_base", 10000.0f));
  if (c.n_layer <= 0 || c.n_layer > 1024) return base::invalid_argument(arch_ + ".block_count out of range");
  if (c.n_embd <= 0 || c.n_head <= 0 || c.n_head_kv <= 0 || c.n_ff <= 0) {
    return base::invalid_argument(arch_ + ": embedding_length, head_count, head_count_kv and feed_forward_length must be positive");
  }
  if (c.n_head % c.n_head_kv != 0) {
    return base::invalid_argument(arch_ + ".attention.head_count (" + std::to_string(c.n_head) +
                                  ") is not a multiple of head_count_kv (" + std::to_string(c.n_head_kv) + ")");
  }
  DLOOP_ASSIGN_OR_RETURN(c.head_dim, u32_or("attention.key_length", c.n_embd / c.n_head));
  if (c.head_dim <= 0 || c.head_dim % 2 != 0) return base::invalid_argument(arch_ + ": head dimension must be even and positive");
  DLOOP_ASSIGN_OR_RETURN(int64_t n_rot, u32_or("rope.dimension_count", c.head_dim));
  if (n_rot != c.head_dim) {
    return base::unimplemented(arch_ + ".rope.dimension_count " + std::to_string(n_rot) + " != head dim " +
                               std::to_string(c.head_dim) + " (partial RoPE is not supported)");
  }
  if (!std::isfinite(c.rms_eps) || c.rms_eps <= 0) return base::invalid_argument(arch_ + ".attention.layer_norm_rms_epsilon must be positive");

  const GgufTensor* embd = file_.find_tensor("token_embd.weight");
  if (embd == nullptr) return base::not_found("tensor 'token_embd.weight' is missing");
  c.n_vocab = embd->ne[1];
  DLOOP_ASSIGN_OR_RETURN(w.token_embd, matrix("token_embd.weight", c.n_vocab, c.n_embd));
  DLOOP_ASSIGN_OR_RETURN(w.output_norm, vector("output_norm.weight", c.n_embd, w));
  if (has_tensor("output.weight")) {
    DLOOP_ASSIGN_OR_RETURN(w.output, matrix("output.weight", c.n_vocab, c.n_embd));
  } else {
    w.output = w.token_embd;  // tied embeddings
  }
  const int64_t q_dim = c.n_head * c.head_dim, kv_dim = c.n_head_kv * c.head_dim;
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    LayerWeights& l = w.layers.emplace_back();
    DLOOP_ASSIGN_OR_RETURN(l.attn_norm, vector(p + "attn_norm.weight", c.n_embd, w));
    DLOOP_ASSIGN_OR_RETURN(l.wq, matrix(p + "attn_q.weight", q_dim, c.n_embd));
    DLOOP_ASSIGN_OR_RETURN(l.wk, matrix(p + "attn_k.weight", kv_dim, c.n_embd));
    DLOOP_ASSIGN_OR_RETURN(l.wv, matrix(p + "attn_v.weight", kv_dim, c.n_embd));
    DLOOP_ASSIGN_OR_RETURN(l.wo, matrix(p + "attn_output.weight", c.n_embd, q_dim));
    if (qkv_bias && has_tensor(p + "attn_q.bias")) {
      DLOOP_ASSIGN_OR_RETURN(l.bq, vector(p + "attn_q.bias", q_dim, w));
      DLOOP_ASSIGN_OR_RETURN(l.bk, vector(p + "attn_k.bias", kv_dim, w));
      DLOOP_ASSIGN_OR_RETURN(l.bv, vector(p + "attn_v.bias", kv_dim, w));
    }
    DLOOP_ASSIGN_OR_RETURN(l.ffn_norm, vector(p + "ffn_norm.weight", c.n_embd, w));
    DLOOP_ASSIGN_OR_RETURN(l.w_gate, matrix(p + "ffn_gate.weight", c.n_ff, c.n_embd));
    DLOOP_ASSIGN_OR_RETURN(l.w_up, matrix(p + "ffn_up.weight", c.n_ff, c.n_embd));
    DLOOP_ASSIGN_OR_RETURN(l.w_down, matrix(p + "ffn_down.weight", c.n_embd, c.n_ff));
  }
  c.n_params = 0;
  for (const GgufTensor& t : file_.tensors()) c.n_params += t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3];
  return base::Status();
}

}  // namespace detail

std::vector<std::string> supported_architectures() {
  std::vector<std::string> out;
  for (const auto& a : detail::kArchitectures) out.emplace_back(a.name);
  return out;
}

namespace {
constexpr const char* kStringSlotKey = "dloop.tool_call.string_slot_tokens";
constexpr const char* kMemberOrderKey = "dloop.tool_call.member_order";
}  // namespace

base::Result<std::unique_ptr<Model>> Model::load(std::shared_ptr<const GgufFile> file) {
  DLOOP_ASSIGN_OR_RETURN(std::string arch, file->get_string("general.architecture"));
  for (const auto& entry : detail::kArchitectures) {
    if (arch != entry.name) continue;
    ModelConfig config;
    config.arch = arch;
    if (file->has("general.name")) {
      if (auto name = file->get_string("general.name"); name.ok()) config.name = *name;
    }
    if (file->has(kStringSlotKey)) {
      auto slot = file->get_u32(kStringSlotKey);
      if (!slot.ok() || *slot < 2 || *slot > 1024) {
        return base::invalid_argument(std::string(kStringSlotKey) + " must be an integer in [2, 1024]");
      }
      config.tool_call_string_slot = *slot;
    }
    if (file->has(kMemberOrderKey)) {
      auto order = file->get_string(kMemberOrderKey);
      if (!order.ok() || (*order != "schema" && *order != "mention")) {
        return base::invalid_argument(std::string(kMemberOrderKey) + " must be the string \"schema\" or \"mention\"");
      }
      if (*order == "mention") config.tool_call_member_order = *order;
    }
    ModelWeights weights;
    detail::ArchLoader loader(*file, arch);
    DLOOP_RETURN_IF_ERROR(entry.load(loader, config, weights));
    return std::make_unique<Model>(std::move(file), std::move(config), std::move(weights));
  }
  std::string names;
  for (const auto& a : supported_architectures()) names += (names.empty() ? "" : ", ") + a;
  return base::unimplemented("general.architecture '" + arch + "' is not supported (supported: " + names + ")");
}

}  // namespace dloop::engine
