// Loads every checked-in test model (tests/data/models/*.gguf, written by
// tests/reference/make_models.py) and checks its metadata and tensor table against the recipe;
// checks the typed getters' conversions and errors, and describe().
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dloop/engine/gguf.h"
#include "gguf_builder.h"

namespace dloop::engine {
namespace {

namespace fs = std::filesystem;

std::string models_dir() { return std::string(DLOOP_SOURCE_DIR) + "/tests/data/models"; }

std::vector<std::string> model_files() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(models_dir())) {
    if (e.path().extension() == ".gguf") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::unique_ptr<GgufFile> must_open(const std::string& path) {
  auto f = GgufFile::open(path);
  EXPECT_TRUE(f.ok()) << f.status().to_string();
  return f.ok() ? std::move(f).value() : nullptr;
}

// The weight type of 2-D tensors, from the file name ("llada-q8_0.gguf" -> Q8_0).
kernels::DType weight_type(const std::string& path) {
  std::string stem = fs::path(path).stem().string();
  std::string t = stem.substr(stem.rfind('-') + 1);
  if (t == "f16") return kernels::DType::kF16;
  if (t == "bf16") return kernels::DType::kBF16;
  if (t == "q8_0") return kernels::DType::kQ8_0;
  if (t == "q4_0") return kernels::DType::kQ4_0;
  if (t == "q4_k") return kernels::DType::kQ4_K;
  if (t == "q6_k") return kernels::DType::kQ6_K;
  return kernels::DType::kF32;
}

TEST(GgufLoad, FindsTheTestModels) { EXPECT_EQ(model_files().size(), 10u); }

void check_tensor_table(const GgufFile& f, const std::string& path) {
  uint64_t prev_end = 0;
  for (const GgufTensor& t : f.tensors()) {
    SCOPED_TRACE(t.name);
    ASSERT_GE(t.n_dims, 1);
    ASSERT_LE(t.n_dims, 2);
    int64_t rows = t.ne[1] * t.ne[2] * t.ne[3];
    EXPECT_EQ(t.n_bytes, static_cast<uint64_t>(kernels::row_bytes(t.type, t.ne[0]) * rows));
    EXPECT_EQ(t.type, t.n_dims == 1 ? kernels::DType::kF32 : weight_type(path));
    EXPECT_EQ(t.offset % f.alignment(), 0u);
    EXPECT_GE(t.offset, prev_end);
    EXPECT_LE(f.data_offset() + t.offset + t.n_bytes, f.file_size());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % f.alignment(), 0u) << "mapping keeps the alignment";
    prev_end = t.offset + t.n_bytes;
  }
}

TEST(GgufLoad, EveryModelMatchesItsRecipe) {
  for (const std::string& path : model_files()) {
    SCOPED_TRACE(path);
    std::unique_ptr<GgufFile> f = must_open(path);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->version(), 3u);
    EXPECT_EQ(f->data_offset() % f->alignment(), 0u);
    auto arch = f->get_string("general.architecture");
    ASSERT_TRUE(arch.ok());
    ASSERT_TRUE(*arch == "llada" || *arch == "dream") << *arch;
    auto n_embd = f->get_u32(*arch + ".embedding_length");
    auto n_layer = f->get_u32(*arch + ".block_count");
    auto tokens = f->get_string_array("tokenizer.ggml.tokens");
    ASSERT_TRUE(n_embd.ok() && n_layer.ok() && tokens.ok());
    EXPECT_EQ(tokens->size(), 310u);
    EXPECT_EQ(*n_layer, 2u);
    EXPECT_EQ(*f->get_u32(*arch + ".context_length"), 256u);
    EXPECT_EQ(*f->get_string("tokenizer.ggml.model"), "gpt2");
    EXPECT_EQ(*f->get_string("tokenizer.ggml.pre"), "qwen2");
    EXPECT_EQ(f->get_i32_array("tokenizer.ggml.token_type")->size(), 310u);
    EXPECT_EQ(*f->get_u32("tokenizer.ggml.mask_token_id"), 309u);
    EXPECT_FALSE(*f->get_bool("tokenizer.ggml.add_bos_token"));

    const GgufTensor* embd = f->find_tensor("token_embd.weight");
    ASSERT_NE(embd, nullptr);
    EXPECT_EQ(embd->ne[0], *n_embd);
    EXPECT_EQ(embd->ne[1], 310);
    for (uint32_t i = 0; i < *n_layer; ++i) {
      for (const char* w : {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate",
                            "ffn_up", "ffn_down"}) {
        EXPECT_NE(f->find_tensor("blk." + std::to_string(i) + "." + w + ".weight"), nullptr) << w;
      }
    }
    bool tied = path.find("tied") != std::string::npos;
    EXPECT_EQ(f->find_tensor("output.weight") == nullptr, tied);
    EXPECT_EQ(f->find_tensor("blk.0.attn_q.bias") != nullptr, *arch == "dream");
    EXPECT_EQ(f->has("diffusion.shift_logits"), *arch == "llada");
    if (*arch == "llada") {
      EXPECT_FALSE(*f->get_bool("diffusion.shift_logits"));
      EXPECT_EQ(*f->get_u32("llada.vocab_size"), 310u);
      EXPECT_FLOAT_EQ(*f->get_f32("llada.rope.freq_base"), 500000.0f);
      EXPECT_FLOAT_EQ(*f->get_f32("llada.attention.layer_norm_rms_epsilon"), 1e-5f);
    } else {
      EXPECT_EQ(*f->get_u32("dream.attention.head_count_kv"), 2u);
      EXPECT_FLOAT_EQ(*f->get_f32("dream.rope.freq_base"), 1000000.0f);
    }
    EXPECT_EQ(f->alignment(), path.find("dream-q8_0") != std::string::npos ? 64u : 32u);
    check_tensor_table(*f, path);
    EXPECT_EQ(f->find_tensor("no.such.tensor"), nullptr);
  }
}

TEST(GgufLoad, FromBytesMatchesOpen) {
  std::string path = models_dir() + "/llada-q8_0.gguf";
  std::unique_ptr<GgufFile> a = must_open(path);
  std::string bytes = read_file(path);
  ASSERT_EQ(bytes.size(), a->file_size());
  auto b = GgufFile::from_bytes(bytes, "copy.gguf");
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ((*b)->name(), "copy.gguf");
  ASSERT_EQ((*b)->kvs().size(), a->kvs().size());
  ASSERT_EQ((*b)->tensors().size(), a->tensors().size());
  for (size_t i = 0; i < a->tensors().size(); ++i) {
    const GgufTensor& x = a->tensors()[i];
    const GgufTensor& y = (*b)->tensors()[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.n_bytes, y.n_bytes);
    EXPECT_EQ(std::memcmp(x.data, y.data, x.n_bytes), 0);
  }
}

TEST(GgufLoad, MissingFileIsAnIoError) {
  auto f = GgufFile::open(models_dir() + "/does-not-exist.gguf");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), base::Code::kIo);
  EXPECT_NE(f.status().message().find("does-not-exist.gguf"), std::string::npos);
}

TEST(GgufLoad, EmptyFileIsDataLoss) {
  std::string path = ::testing::TempDir() + "/empty.gguf";
  { std::FILE* fp = std::fopen(path.c_str(), "wb"); ASSERT_NE(fp, nullptr); std::fclose(fp); }
  auto f = GgufFile::open(path);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), base::Code::kDataLoss);
  EXPECT_NE(f.status().message().find("byte 0"), std::string::npos) << f.status().message();
  std::remove(path.c_str());
}

TEST(GgufGetters, IntegerConversions) {
  dloop::testing::GgufBuilder b;
  b.u8("a.u8", 200).i8("a.i8", -3).u16("a.u16", 60000).i16("a.i16", 7).i32("a.i32", 123).i32("a.neg", -1);
  b.u64("a.u64", 42).u64("a.big", uint64_t{1} << 40).i64("a.i64", 5).f32("a.f32", 1.5f).f64("a.f64", 0.25);
  b.boolean("a.bool", true).string("a.str", "hi");
  b.u8_array("a.bytes", {1, 2, 3}).f32_array("a.floats", {0.5f, -2}).i32_array("a.ints", {-5, 9});
  b.string_array("a.strs", {"x", "", "yz"});
  auto f = GgufFile::from_bytes(b.build(), "t.gguf");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  const GgufFile& g = **f;
  EXPECT_EQ(*g.get_u32("a.u8"), 200u);
  EXPECT_EQ(*g.get_u32("a.u16"), 60000u);
  EXPECT_EQ(*g.get_u32("a.i16"), 7u);
  EXPECT_EQ(*g.get_u32("a.i32"), 123u);
  EXPECT_EQ(*g.get_u32("a.u64"), 42u);
  EXPECT_EQ(*g.get_u32("a.i64"), 5u);
  EXPECT_FLOAT_EQ(*g.get_f32("a.f32"), 1.5f);
  EXPECT_FLOAT_EQ(*g.get_f32("a.f64"), 0.25f);
  EXPECT_TRUE(*g.get_bool("a.bool"));
  EXPECT_EQ(*g.get_string("a.str"), "hi");
  EXPECT_EQ(*g.get_i32_array("a.bytes"), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(*g.get_i32_array("a.ints"), (std::vector<int32_t>{-5, 9}));
  EXPECT_EQ(*g.get_f32_array("a.floats"), (std::vector<float>{0.5f, -2}));
  auto strs = g.get_string_array("a.strs");
  ASSERT_TRUE(strs.ok());
  ASSERT_EQ(strs->size(), 3u);
  EXPECT_EQ((*strs)[2], "yz");
  const GgufValue* v = g.find("a.i8");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(*v->int_at(0), -3);
  EXPECT_FALSE(v->uint_at(0).has_value());
  EXPECT_EQ(g.kvs().size(), 17u);
  EXPECT_EQ(g.kvs()[0].key, "a.u8");
}

TEST(GgufGetters, ErrorsNameTheKeyAndTypes) {
  dloop::testing::GgufBuilder b;
  b.i32("k.neg", -1).u64("k.big", uint64_t{1} << 40).string("k.str", "x").f32("k.f", 1).i32_array("k.arr", {1});
  auto f = GgufFile::from_bytes(b.build(), "m.gguf");
  ASSERT_TRUE(f.ok());
  const GgufFile& g = **f;
  auto e1 = g.get_u32("k.str");
  ASSERT_FALSE(e1.ok());
  EXPECT_EQ(e1.status().code(), base::Code::kInvalidArgument);
  EXPECT_EQ(e1.status().message(), "m.gguf: key 'k.str': expected u32, got string");
  EXPECT_EQ(g.get_u32("k.neg").status().message(), "m.gguf: key 'k.neg': i32 value -1 does not fit in u32");
  EXPECT_FALSE(g.get_u32("k.big").ok());
  EXPECT_FALSE(g.get_u32("k.arr").ok());
  EXPECT_EQ(g.get_string("k.f").status().message(), "m.gguf: key 'k.f': expected string, got f32");
  EXPECT_EQ(g.get_f32_array("k.arr").status().message(),
            "m.gguf: key 'k.arr': expected array of f32, got array of i32");
  EXPECT_FALSE(g.get_bool("k.str").ok());
  EXPECT_FALSE(g.get_string_array("k.str").ok());
  EXPECT_FALSE(g.get_i32_array("k.f").ok());
  auto missing = g.get_f32("k.none");
  EXPECT_EQ(missing.status().code(), base::Code::kNotFound);
  EXPECT_EQ(missing.status().message(), "m.gguf: key 'k.none' not found");
  EXPECT_FALSE(g.has("k.none"));
  EXPECT_TRUE(g.has("k.str"));
}

TEST(GgufDescribe, ListsKeysAndTensors) {
  std::unique_ptr<GgufFile> f = must_open(models_dir() + "/dream-q8_0.gguf");
  std::string d = describe(*f);
  EXPECT_NE(d.find("GGUF v3"), std::string::npos);
  EXPECT_NE(d.find("alignment 64"), std::string::npos);
  EXPECT_NE(d.find("general.architecture = string \"dream\""), std::string::npos) << d;
  EXPECT_NE(d.find("tokenizer.ggml.tokens = array[string; 310] ["), std::string::npos) << d;
  EXPECT_NE(d.find("dream.attention.head_count = u32 4"), std::string::npos);
  EXPECT_NE(d.find("token_embd.weight"), std::string::npos);
  EXPECT_NE(d.find("Q8_0"), std::string::npos);
  EXPECT_NE(d.find("{64, 310}"), std::string::npos);
  EXPECT_NE(d.find("tensors (" + std::to_string(f->tensors().size()) + ")"), std::string::npos);
}

}  // namespace
}  // namespace dloop::engine
