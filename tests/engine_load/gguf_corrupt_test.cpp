// Corrupt-file suite: starts from a valid GGUF built in memory (and from a checked-in model),
// breaks one field at a time (truncation at every offset, magic, version, huge counts and
// lengths, unknown types, duplicates, bad alignment, misplaced tensor data) and requires an error
// Status with the right code and a message naming the place; never a crash.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>

#include "dloop/engine/gguf.h"
#include "gguf_builder.h"

namespace dloop::engine {
namespace {

using dloop::testing::GgufBuilder;
using dloop::testing::GgufLayout;
using dloop::testing::put_u32;
using dloop::testing::put_u64;

constexpr uint32_t kF32 = 0;
constexpr uint32_t kQ8_0 = 8;

// KVs: 0 general.architecture, 1 llada.block_count, 2 tokenizer.ggml.tokens, 3 x.f, 4 x.b.
// Tensors: 0 token_embd.weight F32 {64, 3}, 1 blk.0.attn_q.weight Q8_0 {64, 4}, 2 output_norm.weight F32 {64}.
GgufBuilder base_builder() {
  GgufBuilder b;
  b.string("general.architecture", "llada")
      .u32("llada.block_count", 2)
      .string_array("tokenizer.ggml.tokens", {"a", "bc", "def"})
      .f32("x.f", 1.0f)
      .boolean("x.b", true);
  b.tensor("token_embd.weight", kF32, {64, 3}).tensor("blk.0.attn_q.weight", kQ8_0, {64, 4});
  b.tensor("output_norm.weight", kF32, {64});
  return b;
}

struct Broken {
  base::Code code;
  std::string message;
};

Broken parse_error(const std::string& bytes) {
  auto f = GgufFile::from_bytes(bytes, "t.gguf");
  if (f.ok()) return {base::Code::kOk, ""};
  return {f.status().code(), f.status().message()};
}

// Applies `edit` to the valid base file and expects an error of `code` containing `needle`.
void expect_broken(const std::function<void(std::string&, const GgufLayout&)>& edit, base::Code code,
                   const std::string& needle) {
  GgufLayout l;
  std::string bytes = base_builder().build(&l);
  edit(bytes, l);
  Broken e = parse_error(bytes);
  EXPECT_EQ(e.code, code) << e.message;
  EXPECT_NE(e.message.find(needle), std::string::npos) << "message: " << e.message << "\nwanted: " << needle;
  EXPECT_EQ(e.message.rfind("t.gguf: ", 0), 0u) << e.message;
}

void expect_builder_broken(const GgufBuilder& b, base::Code code, const std::string& needle) {
  Broken e = parse_error(b.build());
  EXPECT_EQ(e.code, code) << e.message;
  EXPECT_NE(e.message.find(needle), std::string::npos) << "message: " << e.message << "\nwanted: " << needle;
}

const auto kLoss = base::Code::kDataLoss;

TEST(GgufCorrupt, BaseFileIsValid) {
  GgufLayout l;
  auto f = GgufFile::from_bytes(base_builder().build(&l), "t.gguf");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ((*f)->tensors().size(), 3u);
  EXPECT_EQ((*f)->tensors()[1].n_bytes, 4u * 2 * 34);
  EXPECT_EQ((*f)->data_offset(), l.data_at);
}

TEST(GgufCorrupt, TruncatedAtEveryOffset) {
  GgufLayout l;
  std::string full = base_builder().build(&l);
  size_t needed = l.tensor_data_at[2] + 64 * 4;  // end of the last tensor's data
  for (size_t n = 0; n < full.size(); ++n) {
    auto f = GgufFile::from_bytes(full.substr(0, n), "t.gguf");
    EXPECT_EQ(f.ok(), n >= needed) << "prefix of " << n << " bytes: " << f.status().to_string();
    if (!f.ok()) {
      EXPECT_EQ(f.status().code(), kLoss) << f.status().message();
    }
  }
}

TEST(GgufCorrupt, TruncatedModelFile) {
  std::ifstream in(std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/llada-q4_0.gguf", std::ios::binary);
  std::string full((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto whole = GgufFile::from_bytes(full);
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  const GgufTensor& last = (*whole)->tensors().back();
  uint64_t needed = (*whole)->data_offset() + last.offset + last.n_bytes;
  uint64_t header = (*whole)->data_offset();
  // Every offset of the first 512 bytes, then strides through the rest of the metadata and the data.
  for (uint64_t n = 0; n < full.size(); n += n < 512 ? 1 : n < header + 64 ? 7 : 251) {
    auto f = GgufFile::from_bytes(full.substr(0, n), "m.gguf");
    ASSERT_EQ(f.ok(), n >= needed) << n << ": " << f.status().to_string();
  }
}

TEST(GgufCorrupt, MagicAndVersion) {
  expect_broken([](std::string& b, const GgufLayout&) { b[0] = 'X'; }, kLoss, "byte 0: bad magic");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u32(b, l.version_at, 1); },
                base::Code::kUnimplemented, "byte 4: GGUF version 1 is not supported");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u32(b, l.version_at, 4); },
                base::Code::kUnimplemented, "version 4");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u32(b, l.version_at, 0x03000000); },
                base::Code::kUnimplemented, "big-endian");
}

TEST(GgufCorrupt, HugeCounts) {
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.n_tensors_at, INT64_MAX); }, kLoss,
                "byte 8: tensor count 9223372036854775807 exceeds the file");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.n_tensors_at, ~uint64_t{0}); }, kLoss,
                "tensor count");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.n_kv_at, uint64_t{1} << 40); }, kLoss,
                "byte 16: key/value count");
  // One key too many: the tensor infos are read as a key/value pair and fail somewhere.
  GgufLayout l;
  std::string bytes = base_builder().build(&l);
  put_u64(bytes, l.n_kv_at, 6);
  EXPECT_EQ(parse_error(bytes).code, kLoss);
  put_u64(bytes, l.n_kv_at, 5);
  put_u64(bytes, l.n_tensors_at, 4);
  EXPECT_EQ(parse_error(bytes).code, kLoss);
}

TEST(GgufCorrupt, BadKeys) {
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.key_at[0], 99999999); }, kLoss,
                "byte 24: key #0: string length 99999999 exceeds the file");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.key_at[1], 0); }, kLoss,
                "key #1 is empty");
  expect_broken([](std::string& b, const GgufLayout& l) { b.replace(l.key_at[4] + 8, 3, "x.f"); }, kLoss,
                "duplicate key 'x.f'");
}

TEST(GgufCorrupt, BadValues) {
  expect_broken([](std::string& b, const GgufLayout& l) { put_u32(b, l.value_type_at[1], 13); }, kLoss,
                "key 'llada.block_count': value type 13 is unknown");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u32(b, l.value_at[2], 9); }, kLoss,
                "key 'tokenizer.ggml.tokens': nested arrays are not supported");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u32(b, l.value_at[2], 4000); }, kLoss,
                "array element type 4000 is unknown");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.value_at[2] + 4, uint64_t{1} << 61); },
                kLoss, "key 'tokenizer.ggml.tokens': array count 2305843009213693952 exceeds the file");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.value_at[2] + 12, 1u << 30); }, kLoss,
                "key 'tokenizer.ggml.tokens': string length 1073741824 exceeds the file");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.value_at[0], ~uint64_t{0}); }, kLoss,
                "string length 18446744073709551615 exceeds the file");
  expect_broken([](std::string& b, const GgufLayout& l) { b[l.value_at[4]] = 2; }, kLoss,
                "key 'x.b': bool value 2 is not 0 or 1");
  // An array of u32 whose count fits the bytes left only as u8.
  GgufBuilder arr = base_builder();
  arr.u8_array("x.arr", std::vector<uint8_t>(16, 1));
  GgufLayout l;
  std::string bytes = arr.build(&l);
  put_u32(bytes, l.value_at[5], 10);  // u64 elements: 16 * 8 bytes > what is left before the data
  put_u64(bytes, l.value_at[5] + 4, bytes.size() / 8 + 1);
  EXPECT_NE(parse_error(bytes).message.find("array count"), std::string::npos) << parse_error(bytes).message;
}

TEST(GgufCorrupt, BadAlignment) {
  expect_builder_broken(base_builder().u32("general.alignment", 48), kLoss, "alignment 48 is not a power of two");
  expect_builder_broken(base_builder().u32("general.alignment", 0), kLoss, "alignment 0 is not a power of two");
  expect_builder_broken(base_builder().string("general.alignment", "32"), kLoss,
                        "key 'general.alignment': expected u32, got string");
  GgufBuilder b = base_builder().u32("general.alignment", 64);
  b.alignment = 64;
  EXPECT_EQ(parse_error(b.build()).code, base::Code::kOk);
  b.alignment = 32;  // written with 32-byte padding but declaring 64
  EXPECT_EQ(parse_error(b.build()).code, kLoss);
}

TEST(GgufCorrupt, BadTensorInfos) {
  const auto kUnimpl = base::Code::kUnimplemented;
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.tensor_at[0], 1u << 20); }, kLoss,
                "tensor #0 name: string length 1048576 exceeds the file");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.tensor_at[1], 0); }, kLoss,
                "tensor #1 has an empty name");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u32(b, l.n_dims_at[0], 5); }, kLoss,
                "tensor 'token_embd.weight': n_dims 5 exceeds 4");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.n_dims_at[0] + 4, ~uint64_t{0}); }, kLoss,
                "tensor 'token_embd.weight': ne[0] = -1 is negative");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.n_dims_at[1] + 4, 33); }, kLoss,
                "tensor 'blk.0.attn_q.weight': ne[0] = 33 is not a multiple of the Q8_0 block size 32");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u32(b, l.type_at[1], 77); }, kLoss,
                "tensor 'blk.0.attn_q.weight': unknown type id 77");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u32(b, l.type_at[1], 13); }, kUnimpl,
                "tensor 'blk.0.attn_q.weight': type Q5_K (id 13) is not supported");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u32(b, l.type_at[0], 4); }, kLoss,
                "unknown type id 4");
  expect_broken(
      [](std::string& b, const GgufLayout& l) {
        put_u64(b, l.n_dims_at[0] + 4, uint64_t{1} << 40);
        put_u64(b, l.n_dims_at[0] + 12, uint64_t{1} << 40);
      },
      kLoss, "tensor 'token_embd.weight': shape overflows");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.n_dims_at[2] + 4, 1u << 20); }, kLoss,
                "tensor 'output_norm.weight': 4194304 bytes of data exceed the file");
  expect_builder_broken(base_builder().tensor(std::string(64, 'n'), kF32, {4}), kLoss,
                        "tensor #3: name length 64 exceeds 63 bytes");
  expect_builder_broken(base_builder().tensor("output_norm.weight", kF32, {4}), kLoss,
                        "duplicate tensor 'output_norm.weight'");
}

TEST(GgufCorrupt, BadTensorOffsets) {
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.offset_at[1], 768 + 1); }, kLoss,
                "tensor 'blk.0.attn_q.weight': has offset 769, expected 768");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.offset_at[1], 0); }, kLoss,
                "has offset 0, expected 768");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.offset_at[0], 32); }, kLoss,
                "tensor 'token_embd.weight': has offset 32, expected 0");
  expect_broken([](std::string& b, const GgufLayout& l) { put_u64(b, l.offset_at[2], ~uint64_t{0} - 8); }, kLoss,
                "tensor 'output_norm.weight': has offset");
  // Data cut short: the last tensor lies partly outside the file.
  expect_broken([](std::string& b, const GgufLayout& l) { b.resize(l.tensor_data_at[2] + 10); }, kLoss,
                "tensor 'output_norm.weight': data at bytes [");
}

TEST(GgufCorrupt, NoTensorsNeedsNoDataBlob) {
  GgufBuilder b;
  b.string("general.architecture", "x");
  std::string bytes = b.build();
  bytes.resize(24 + 8 + 20 + 4 + 8 + 1);  // header + the one KV, without padding
  auto f = GgufFile::from_bytes(bytes);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_TRUE((*f)->tensors().empty());
}

// Every single byte of the header and tensor infos set to 0xFF or 0x80: error or success, no crash.
TEST(GgufCorrupt, EveryHeaderByteFlipped) {
  GgufLayout l;
  std::string full = base_builder().build(&l);
  int errors = 0;
  for (size_t i = 0; i < l.data_at; ++i) {
    for (char v : {'\xff', '\x80', '\x00'}) {
      std::string bytes = full;
      bytes[i] = v;
      errors += parse_error(bytes).code != base::Code::kOk;
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace dloop::engine
