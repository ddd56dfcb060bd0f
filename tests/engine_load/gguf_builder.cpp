// GgufBuilder and TestVocab (see gguf_builder.h).
#include "gguf_builder.h"

#include <cstring>

#include "dloop/kernels/dtype.h"

namespace dloop::testing {
namespace {

template <typename T>
std::string pod(T v) {
  std::string s(sizeof(T), '\0');
  std::memcpy(s.data(), &v, sizeof(T));
  return s;
}

std::string gguf_string(const std::string& s) { return pod<uint64_t>(s.size()) + s; }

size_t pad_to(size_t n, size_t align) { return (n + align - 1) / align * align; }

}  // namespace

void put_u32(std::string& bytes, size_t at, uint32_t v) { std::memcpy(bytes.data() + at, &v, 4); }
void put_u64(std::string& bytes, size_t at, uint64_t v) { std::memcpy(bytes.data() + at, &v, 8); }
uint64_t get_u64(const std::string& bytes, size_t at) {
  uint64_t v;
  std::memcpy(&v, bytes.data() + at, 8);
  return v;
}

GgufBuilder& GgufBuilder::raw(const std::string& key, uint32_t type, const std::string& payload) {
  kvs_.push_back({key, type, payload});
  return *this;
}

GgufBuilder& GgufBuilder::u8(const std::string& k, uint8_t v) { return raw(k, 0, pod(v)); }
GgufBuilder& GgufBuilder::i8(const std::string& k, int8_t v) { return raw(k, 1, pod(v)); }
GgufBuilder& GgufBuilder::u16(const std::string& k, uint16_t v) { return raw(k, 2, pod(v)); }
GgufBuilder& GgufBuilder::i16(const std::string& k, int16_t v) { return raw(k, 3, pod(v)); }
GgufBuilder& GgufBuilder::u32(const std::string& k, uint32_t v) { return raw(k, 4, pod(v)); }
GgufBuilder& GgufBuilder::i32(const std::string& k, int32_t v) { return raw(k, 5, pod(v)); }
GgufBuilder& GgufBuilder::f32(const std::string& k, float v) { return raw(k, 6, pod(v)); }
GgufBuilder& GgufBuilder::boolean(const std::string& k, bool v) { return raw(k, 7, pod<uint8_t>(v ? 1 : 0)); }
GgufBuilder& GgufBuilder::string(const std::string& k, const std::string& v) { return raw(k, 8, gguf_string(v)); }
GgufBuilder& GgufBuilder::u64(const std::string& k, uint64_t v) { return raw(k, 10, pod(v)); }
GgufBuilder& GgufBuilder::i64(const std::string& k, int64_t v) { return raw(k, 11, pod(v)); }
GgufBuilder& GgufBuilder::f64(const std::string& k, double v) { return raw(k, 12, pod(v)); }

GgufBuilder& GgufBuilder::string_array(const std::string& k, const std::vector<std::string>& v) {
  std::string p = pod<uint32_t>(8) + pod<uint64_t>(v.size());
  for (const std::string& s : v) p += gguf_string(s);
  return raw(k, 9, p);
}

GgufBuilder& GgufBuilder::i32_array(const std::string& k, const std::vector<int32_t>& v) {
  std::string p = pod<uint32_t>(5) + pod<uint64_t>(v.size());
  for (int32_t x : v) p += pod(x);
  return raw(k, 9, p);
}

GgufBuilder& GgufBuilder::u8_array(const std::string& k, const std::vector<uint8_t>& v) {
  std::string p = pod<uint32_t>(0) + pod<uint64_t>(v.size());
  for (uint8_t x : v) p += pod(x);
  return raw(k, 9, p);
}

GgufBuilder& GgufBuilder::f32_array(const std::string& k, const std::vector<float>& v) {
  std::string p = pod<uint32_t>(6) + pod<uint64_t>(v.size());
  for (float x : v) p += pod(x);
  return raw(k, 9, p);
}

GgufBuilder& GgufBuilder::tensor(const std::string& name, uint32_t type, std::vector<int64_t> ne) {
  kernels::DTypeInfo info = *kernels::dtype_info(type);
  uint64_t n = static_cast<uint64_t>(ne[0] / info.block_elems * info.block_bytes);
  for (size_t d = 1; d < ne.size(); ++d) n *= static_cast<uint64_t>(ne[d]);
  tensors_.push_back({name, type, std::move(ne), n});
  return *this;
}

std::string GgufBuilder::build(GgufLayout* layout) const {
  GgufLayout l;
  std::string out = "GGUF" + pod(version) + pod<int64_t>(tensors_.size()) + pod<int64_t>(kvs_.size());
  for (const Kv& kv : kvs_) {
    l.key_at.push_back(out.size());
    out += gguf_string(kv.key);
    l.value_type_at.push_back(out.size());
    out += pod(kv.type);
    l.value_at.push_back(out.size());
    out += kv.payload;
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    l.tensor_at.push_back(out.size());
    out += gguf_string(t.name);
    l.n_dims_at.push_back(out.size());
    out += pod<uint32_t>(t.ne.size());
    for (int64_t n : t.ne) out += pod(n);
    l.type_at.push_back(out.size());
    out += pod(t.type);
    l.offset_at.push_back(out.size());
    out += pod(offset);
    offset += pad_to(t.n_bytes, alignment);
  }
  out.resize(pad_to(out.size(), alignment), '\0');
  l.data_at = out.size();
  for (const Tensor& t : tensors_) {
    l.tensor_data_at.push_back(out.size());
    for (uint64_t i = 0; i < t.n_bytes; ++i) out += static_cast<char>(i * 7 + 1);
    out.resize(pad_to(out.size(), alignment), '\0');
  }
  if (layout != nullptr) *layout = l;
  return out;
}

std::string alphabet_text(const std::string& bytes) {
  std::string out;
  for (unsigned char b : bytes) {
    bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    uint32_t cp = b;
    if (!printable) {
      cp = 256;
      for (uint32_t x = 0; x < b; ++x) {
        bool p = (x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE;
        if (!p) ++cp;
      }
    }
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

GgufBuilder vocab_builder(const TestVocab& vocab) {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(alphabet_text(std::string(1, static_cast<char>(b))));
    types.push_back(1);
  }
  for (const std::string& m : vocab.merges) {
    size_t space = m.find(' ', 1);
    tokens.push_back(m.substr(0, space) + m.substr(space + 1));
    types.push_back(1);
  }
  for (const TestVocab::Extra& e : vocab.extras) {
    tokens.push_back(e.text);
    types.push_back(e.type);
  }
  GgufBuilder b;
  b.string("general.architecture", "llada")
      .string("tokenizer.ggml.model", "gpt2")
      .string("tokenizer.ggml.pre", vocab.pre)
      .string_array("tokenizer.ggml.tokens", tokens)
      .i32_array("tokenizer.ggml.token_type", types)
      .string_array("tokenizer.ggml.merges", vocab.merges);
  return b;
}

}  // namespace dloop::testing
