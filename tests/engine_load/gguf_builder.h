// Test helper: writes GGUF v3 files in memory, valid by default, and records the byte offset of
// every field so a test can corrupt exactly one of them. Also builds small byte-level BPE
// vocabularies (256 byte tokens + merges + specials) for tokenizer tests. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dloop::testing {

// Byte offsets of the fields of the last GgufBuilder::build().
struct GgufLayout {
  size_t version_at = 4;
  size_t n_tensors_at = 8;
  size_t n_kv_at = 16;
  std::vector<size_t> key_at;         // per KV: the key's u64 length
  std::vector<size_t> value_type_at;  // per KV: the u32 value type
  std::vector<size_t> value_at;       // per KV: the payload (arrays: the u32 element type)
  std::vector<size_t> tensor_at;      // per tensor info: the name's u64 length
  std::vector<size_t> n_dims_at;      // per tensor info: u32 n_dims (ne[] follows)
  std::vector<size_t> type_at;        // per tensor info: u32 ggml type
  std::vector<size_t> offset_at;      // per tensor info: u64 data offset
  size_t data_at = 0;                 // start of the data blob
  std::vector<size_t> tensor_data_at;  // per tensor: file offset of its data
};

class GgufBuilder {
 public:
  uint32_t version = 3;
  uint32_t alignment = 32;  // used for padding; add an explicit general.alignment key to change it

  GgufBuilder& u8(const std::string& key, uint8_t v);
  GgufBuilder& i8(const std::string& key, int8_t v);
  GgufBuilder& u16(const std::string& key, uint16_t v);
  GgufBuilder& i16(const std::string& key, int16_t v);
  GgufBuilder& u32(const std::string& key, uint32_t v);
  GgufBuilder& i32(const std::string& key, int32_t v);
  GgufBuilder& u64(const std::string& key, uint64_t v);
  GgufBuilder& i64(const std::string& key, int64_t v);
  GgufBuilder& f32(const std::string& key, float v);
  GgufBuilder& f64(const std::string& key, double v);
  GgufBuilder& boolean(const std::string& key, bool v);
  GgufBuilder& string(const std::string& key, const std::string& v);
  GgufBuilder& string_array(const std::string& key, const std::vector<std::string>& v);
  GgufBuilder& i32_array(const std::string& key, const std::vector<int32_t>& v);
  GgufBuilder& u8_array(const std::string& key, const std::vector<uint8_t>& v);
  GgufBuilder& f32_array(const std::string& key, const std::vector<float>& v);
  // A KV with any type id and payload bytes (for malformed values).
  GgufBuilder& raw(const std::string& key, uint32_t type, const std::string& payload);

  // A tensor of a supported type with zero-filled data of the right size (ne in ggml order).
  GgufBuilder& tensor(const std::string& name, uint32_t type, std::vector<int64_t> ne);

  std::string build(GgufLayout* layout = nullptr) const;

 private:
  struct Kv {
    std::string key;
    uint32_t type;
    std::string payload;
  };
  struct Tensor {
    std::string name;
    uint32_t type;
    std::vector<int64_t> ne;
    uint64_t n_bytes;
  };
  std::vector<Kv> kvs_;
  std::vector<Tensor> tensors_;
};

// Little-endian field patching.
void put_u32(std::string& bytes, size_t at, uint32_t v);
void put_u64(std::string& bytes, size_t at, uint64_t v);
uint64_t get_u64(const std::string& bytes, size_t at);

// A byte-level BPE vocabulary for tokenizer tests.
struct TestVocab {
  std::string pre = "qwen2";
  std::vector<std::string> merges;  // "left right", token texts in the GPT-2 alphabet
  struct Extra {
    std::string text;
    int32_t type;  // 3 CONTROL, 4 USER_DEFINED, 1 NORMAL, ...
  };
  std::vector<Extra> extras;  // appended after the byte tokens and merge results
};

// The GPT-2 alphabet text of raw bytes ("Ġhello" for " hello").
std::string alphabet_text(const std::string& bytes);
// A GGUF holding `vocab` (tokens: 256 byte tokens in byte order, one per merge result, then the
// extras), token types, merges and tokenizer.ggml.model "gpt2". Extra keys go through `more`.
GgufBuilder vocab_builder(const TestVocab& vocab);

}  // namespace dloop::testing
