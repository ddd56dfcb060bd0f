// Random-weight GGUF models; see random_model.h.
#include "dloop/engine/random_model.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "../decoding/rng.h"
#include "../tokenizer/byte_alphabet.h"
#include "dloop/engine/gguf_writer.h"

namespace dloop::engine {
namespace {

// Approximately normal values (a sum of four uniforms) from the decoder's SplitMix64.
class WeightRng {
 public:
  explicit WeightRng(uint64_t seed) : rng_(seed) {}
  float normal() {
    double acc = 0;
    for (int i = 0; i < 4; ++i) acc += rng_.uniform();
    return static_cast<float>((acc - 2.0) * 1.7320508);  // variance 1
  }

 private:
  detail::SplitMix64 rng_;
};

// Fills n_bytes of `type` data for a matrix of `cols`-element rows with N(0, scale^2) values.
void fill_typed(uint8_t* dst, uint64_t n_bytes, kernels::DType type, int64_t cols, float scale, uint64_t seed) {
  WeightRng rng(seed);
  const int64_t rb = kernels::row_bytes(type, cols);
  const int64_t rows = static_cast<int64_t>(n_bytes) / rb;
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = rng.normal() * scale;
    uint8_t* out = dst + r * rb;
    switch (type) {
      case kernels::DType::kF32: std::memcpy(out, row.data(), static_cast<size_t>(rb)); break;
      case kernels::DType::kF16:
        for (int64_t i = 0; i < cols; ++i) { uint16_t h = f32_to_f16(row[i]); std::memcpy(out + 2 * i, &h, 2); }
        break;
      case kernels::DType::kBF16:
        for (int64_t i = 0; i < cols; ++i) { uint16_t h = f32_to_bf16(row[i]); std::memcpy(out + 2 * i, &h, 2); }
        break;
      case kernels::DType::kQ8_0:
        for (int64_t b = 0; b < cols / 32; ++b) {
          float amax = 0;
          for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(row[b * 32 + i]));
          float d = amax / 127.0f;
          uint16_t dh = f32_to_f16(d);
          uint8_t* blk = out + b * 34;
          std::memcpy(blk, &dh, 2);
          for (int i = 0; i < 32; ++i) {
            blk[2 + i] = static_cast<uint8_t>(static_cast<int8_t>(d == 0 ? 0 : std::lround(row[b * 32 + i] / d)));
          }
        }
        break;
      default: std::memset(out, 0, static_cast<size_t>(rb));
    }
  }
}

void add_vocab(GgufWriter& w, int64_t n_vocab) {
  const std::vector<std::string> specials = {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|mask|>"};
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  for (int b = 0; b < 256; ++b) { tokens.push_back(byte_char(static_cast<uint8_t>(b))); types.push_back(1); }
  tokens.push_back("\xc4\xa0t");  // "Ġt", the one merge below
  types.push_back(1);
  while (static_cast<int64_t>(tokens.size()) < n_vocab - static_cast<int64_t>(specials.size())) {
    tokens.push_back("[PAD" + std::to_string(tokens.size()) + "]");
    types.push_back(5);  // UNUSED
  }
  const auto first_special = static_cast<uint32_t>(tokens.size());
  for (const auto& s : specials) { tokens.push_back(s); types.push_back(3); }  // CONTROL
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", "qwen2");
  w.add_string_array("tokenizer.ggml.tokens", tokens);
  w.add_i32_array("tokenizer.ggml.token_type", types);
  w.add_string_array("tokenizer.ggml.merges", {"\xc4\xa0 t"});
  w.add_u32("tokenizer.ggml.eos_token_id", first_special);
  w.add_u32("tokenizer.ggml.padding_token_id", first_special);
  w.add_u32("tokenizer.ggml.eot_token_id", first_special + 2);
  w.add_u32("tokenizer.ggml.mask_token_id", first_special + 3);
  w.add_bool("tokenizer.ggml.add_bos_token", false);
  w.add_string("tokenizer.chat_template",
               "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
               "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{'<|im_start|>assistant\\n'}}{% endif %}");
}

}  // namespace

int64_t RandomModelSpec::n_params() const {
  const int64_t hd = n_embd / n_head;
  const int64_t per_layer = n_embd * (n_head * hd) * 2 + n_embd * (n_head_kv * hd) * 2 + 3 * n_embd * n_ff + 2 * n_embd;
  return n_layer * per_layer + 2 * n_vocab * n_embd + n_embd;
}

std::vector<std::string> random_model_preset_names() { return {"tiny", "small", "0.5b", "llada-8b"}; }

std::optional<RandomModelSpec> random_model_preset(const std::string& name) {
  RandomModelSpec s;
  s.name = name;
  if (name == "tiny") return s;
  if (name == "small") { s.n_layer = 12; s.n_embd = 768; s.n_head = s.n_head_kv = 12; s.n_ff = 2048; s.n_vocab = 32000; return s; }
  if (name == "0.5b") { s.n_layer = 24; s.n_embd = 1280; s.n_head = s.n_head_kv = 20; s.n_ff = 3456; s.n_vocab = 32000; return s; }
  if (name == "llada-8b") {
    s.n_layer = 32; s.n_embd = 4096; s.n_head = s.n_head_kv = 32; s.n_ff = 12288; s.n_vocab = 126464;
    s.type = kernels::DType::kBF16;
    return s;
  }
  return std::nullopt;
}

base::Status write_random_model(const RandomModelSpec& s, const std::string& path) {
  using kernels::DType;
  if (s.n_head <= 0 || s.n_head_kv <= 0 || s.n_embd % s.n_head != 0 || s.n_head % s.n_head_kv != 0) {
    return base::invalid_argument("random model: n_embd must divide by n_head, and n_head by n_head_kv");
  }
  if (s.n_vocab < 300) return base::invalid_argument("random model: n_vocab must be at least 300");
  const int64_t block = kernels::dtype_info(s.type).block_elems;
  if (s.n_embd % block != 0 || s.n_ff % block != 0) {
    return base::invalid_argument(std::string("random model: n_embd and n_ff must be multiples of the ") +
                                  kernels::dtype_info(s.type).name + " block size");
  }
  const std::string a = s.arch;
  const int64_t hd = s.n_embd / s.n_head;
  GgufWriter w;
  w.add_string("general.architecture", a);
  w.add_string("general.name", "random-" + s.name);
  w.add_u32(a + ".context_length", static_cast<uint32_t>(s.n_ctx));
  w.add_u32(a + ".embedding_length", static_cast<uint32_t>(s.n_embd));
  w.add_u32(a + ".block_count", static_cast<uint32_t>(s.n_layer));
  w.add_u32(a + ".feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w.add_u32(a + ".attention.head_count", static_cast<uint32_t>(s.n_head));
  w.add_u32(a + ".attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  w.add_f32(a + ".rope.freq_base", 500000.0f);
  w.add_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
  w.add_bool(a + ".attention.causal", false);
  if (a == "llada") w.add_bool("diffusion.shift_logits", false);
  if (s.tool_call_string_slot > 0) {
    w.add_u32("dloop.tool_call.string_slot_tokens", static_cast<uint32_t>(s.tool_call_string_slot));
  }
  if (!s.tool_call_member_order.empty()) w.add_string("dloop.tool_call.member_order", s.tool_call_member_order);
  add_vocab(w, s.n_vocab);
  uint64_t seed = s.seed * 1000003;
  auto matrix = [&](const std::string& name, int64_t rows, int64_t cols, DType type) {
    const float scale = 1.0f / std::sqrt(static_cast<float>(cols));
    const uint64_t sd = ++seed;
    w.add_tensor(name, type, {cols, rows}, [=](uint8_t* dst, uint64_t n) { fill_typed(dst, n, type, cols, scale, sd); });
  };
  auto norm = [&](const std::string& name, int64_t n) {
    w.add_tensor(name, DType::kF32, {n}, [](uint8_t* dst, uint64_t bytes) {
      for (uint64_t i = 0; i < bytes / 4; ++i) { float one = 1.0f; std::memcpy(dst + 4 * i, &one, 4); }
    });
  };
  matrix("token_embd.weight", s.n_vocab, s.n_embd, s.type);
  for (int64_t i = 0; i < s.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    norm(p + "attn_norm.weight", s.n_embd);
    matrix(p + "attn_q.weight", s.n_head * hd, s.n_embd, s.type);
    matrix(p + "attn_k.weight", s.n_head_kv * hd, s.n_embd, s.type);
    matrix(p + "attn_v.weight", s.n_head_kv * hd, s.n_embd, s.type);
    matrix(p + "attn_output.weight", s.n_embd, s.n_head * hd, s.type);
    norm(p + "ffn_norm.weight", s.n_embd);
    matrix(p + "ffn_gate.weight", s.n_ff, s.n_embd, s.type);
    matrix(p + "ffn_up.weight", s.n_ff, s.n_embd, s.type);
    matrix(p + "ffn_down.weight", s.n_embd, s.n_ff, s.type);
  }
  norm("output_norm.weight", s.n_embd);
  matrix("output.weight", s.n_vocab, s.n_embd, s.type);
  return w.write(path);
}

uint16_t f32_to_f16(float v) {
  uint32_t x = std::bit_cast<uint32_t>(v);
  const uint32_t sign = (x >> 16) & 0x8000;
  x &= 0x7FFFFFFF;
  if (x >= 0x7F800000) return static_cast<uint16_t>(sign | 0x7C00 | (x > 0x7F800000 ? 0x200 : 0));
  if (x >= 0x477FF000) return static_cast<uint16_t>(sign | 0x7C00);  // overflow to inf
  if (x < 0x38800000) {  // subnormal half (or zero)
    const float f = std::bit_cast<float>(x);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::lrint(f * 16777216.0f)));
  }
  const uint32_t mant_round = x + 0xFFF + ((x >> 13) & 1);
  return static_cast<uint16_t>(sign | ((mant_round - 0x38000000) >> 13));
}

uint16_t f32_to_bf16(float v) {
  uint32_t x = std::bit_cast<uint32_t>(v);
  if ((x & 0x7FFFFFFF) > 0x7F800000) return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7FFF + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace dloop::engine
