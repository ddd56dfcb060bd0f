// libFuzzer target for the GGUF reader and the tokenizer loader (see gguf_fuzz.h). Built as the
// `gguf_fuzz` binary with -DDLOOP_FUZZ=ON and clang (scripts/fuzz-gguf), and linked into the
// gguf_fuzz_replay_test GoogleTest in every build.
#include "gguf_fuzz.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dloop/engine/chat.h"
#include "dloop/engine/gguf.h"
#include "dloop/engine/tokenizer.h"

namespace dloop::fuzz {
namespace {

using engine::GgufFile;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "gguf_fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

// Every getter on every key; results are ignored, only crashes matter.
size_t read_all_values(const GgufFile& f) {
  size_t n = 0;
  for (const engine::GgufKv& kv : f.kvs()) {
    n += f.get_u32(kv.key).ok() + f.get_f32(kv.key).ok() + f.get_bool(kv.key).ok();
    n += f.get_string(kv.key).ok() + f.get_string_array(kv.key).ok();
    n += f.get_i32_array(kv.key).ok() + f.get_f32_array(kv.key).ok();
    check(f.has(kv.key) && f.find(kv.key) != nullptr, "a listed key is found");
  }
  return n;
}

unsigned touch_tensors(const GgufFile& f) {
  unsigned sum = 0;
  for (const engine::GgufTensor& t : f.tensors()) {
    check(f.find_tensor(t.name) == &t, "a listed tensor is found");
    check(t.data + t.n_bytes <= t.data - t.offset - f.data_offset() + f.file_size(), "tensor inside the file");
    if (t.n_bytes > 0) sum += t.data[0] + t.data[t.n_bytes - 1];
  }
  return sum;
}

void exercise_tokenizer(const engine::Tokenizer& tok, const GgufFile& f, const uint8_t* data, size_t size) {
  // Text: a slice of the input itself (arbitrary bytes) followed by every special token's text.
  std::string text(reinterpret_cast<const char*>(data), std::min<size_t>(size, 512));
  for (int32_t id = 0; id < tok.n_vocab() && id < 4096; ++id) {
    engine::TokenType t = tok.token_type(id);
    if (t == engine::TokenType::kControl || t == engine::TokenType::kUserDefined) text += tok.token_text(id);
  }
  for (bool parse_special : {true, false}) {
    std::vector<int32_t> ids = tok.encode(text, parse_special);
    for (int32_t id : ids) check(id >= 0 && id < tok.n_vocab(), "ids inside the vocabulary");
    check(tok.decode(ids, true) == text, "encode/decode round trip");
  }
  std::string source;
  if (auto s = f.get_string("tokenizer.chat_template"); s.ok()) source = *s;
  engine::ChatTemplate chat = engine::ChatTemplate::detect(source);
  std::string prompt = chat.render({{"system", "s"}, {"user", text}}, {}, true);
  check(!tok.encode(prompt, true).empty(), "a rendered prompt has tokens");
}

}  // namespace

GgufFuzzLevel fuzz_gguf(const uint8_t* data, size_t size) {
  auto file = GgufFile::from_bytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.gguf");
  if (!file.ok()) {
    check(!file.status().message().empty(), "errors have a message");
    return GgufFuzzLevel::kRejected;
  }
  const GgufFile& f = **file;
  volatile size_t sink = read_all_values(f) + touch_tensors(f) + engine::describe(f).size();
  (void)sink;
  auto tok = engine::Tokenizer::from_gguf(f);
  if (!tok.ok()) return GgufFuzzLevel::kParsed;
  exercise_tokenizer(*tok, f, data, size);
  return GgufFuzzLevel::kTokenizer;
}

}  // namespace dloop::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dloop::fuzz::fuzz_gguf(data, size);
  return 0;
}
