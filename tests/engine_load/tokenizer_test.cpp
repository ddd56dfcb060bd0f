// Tokenizer tests: the golden cases of tests/data/golden/tokenizer_cases.json (ids from the
// reference tokenizer in tests/reference/make_models.py) must match exactly; pre-tokenizer splits
// for Unicode text match Python's `regex`; merge order, special-token matching, loading errors;
// and encode -> decode round trips on random bytes, including invalid UTF-8.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/engine/gguf.h"
#include "dloop/engine/tokenizer.h"
#include "gguf_builder.h"
#include "pre_tokenizer.h"
#include "pretok_cases.h"

namespace dloop::engine {
namespace {

using dloop::testing::alphabet_text;
using dloop::testing::TestVocab;
using dloop::testing::vocab_builder;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Tokenizer model_tokenizer() {
  auto f = GgufFile::open(std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/llada-f32.gguf");
  EXPECT_TRUE(f.ok()) << f.status().to_string();
  auto t = Tokenizer::from_gguf(**f);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return t.ok() ? std::move(t).value() : Tokenizer();
}

base::Result<Tokenizer> tokenizer_of(const dloop::testing::GgufBuilder& b) {
  auto f = GgufFile::from_bytes(b.build(), "vocab.gguf");
  if (!f.ok()) return f.status();
  return Tokenizer::from_gguf(**f);
}

Tokenizer must(base::Result<Tokenizer> t) {
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return t.ok() ? std::move(t).value() : Tokenizer();
}

std::vector<int32_t> ids_of(const base::Json& array) {
  std::vector<int32_t> out;
  for (const base::Json& v : array.as_array()) out.push_back(static_cast<int32_t>(v.as_int()));
  return out;
}

TEST(Tokenizer, GoldenCases) {
  std::string path = std::string(DLOOP_SOURCE_DIR) + "/tests/data/golden/tokenizer_cases.json";
  auto doc = base::Json::parse(read_file(path));
  ASSERT_TRUE(doc.ok()) << doc.status().to_string();
  ASSERT_EQ(doc->find("format")->as_int(), 1);
  ASSERT_EQ(doc->find("model")->as_string(), "llada-f32.gguf");
  ASSERT_FALSE(doc->find("add_special")->as_bool());
  Tokenizer tok = model_tokenizer();
  const base::Json::Array& cases = doc->find("cases")->as_array();
  ASSERT_GE(cases.size(), 9u);
  for (const base::Json& c : cases) {
    const std::string& text = c.find("text")->as_string();
    bool parse_special = c.find("parse_special")->as_bool();
    SCOPED_TRACE(text);
    std::vector<int32_t> ids = tok.encode(text, parse_special);
    EXPECT_EQ(ids, ids_of(*c.find("ids")));
    EXPECT_EQ(tok.decode(ids, /*render_special=*/true), text);
  }
}

TEST(Tokenizer, ModelSpecialIds) {
  Tokenizer tok = model_tokenizer();
  EXPECT_EQ(tok.n_vocab(), 310);
  EXPECT_EQ(tok.bos_id(), 306);
  EXPECT_EQ(tok.eos_id(), 306);
  EXPECT_EQ(tok.pad_id(), 306);
  EXPECT_EQ(tok.eot_id(), 308);
  EXPECT_EQ(tok.mask_id(), 309);
  EXPECT_FALSE(tok.add_bos());
  EXPECT_EQ(tok.pre_name(), "qwen2");
  EXPECT_EQ(tok.find_special("<|im_start|>"), 307);
  EXPECT_EQ(tok.find_special("<|mask|>"), 309);
  EXPECT_FALSE(tok.find_special("<|nope|>").has_value());
  EXPECT_FALSE(tok.find_special("a").has_value());
  EXPECT_TRUE(tok.is_control(306));
  EXPECT_FALSE(tok.is_control(97));
  EXPECT_EQ(tok.token_type(97), TokenType::kNormal);
  EXPECT_EQ(tok.token_type(-1), TokenType::kUndefined);
  EXPECT_EQ(tok.token_type(310), TokenType::kUndefined);
  EXPECT_EQ(tok.token_text(32), " ");
  EXPECT_EQ(tok.token_text(10), "\n");
  EXPECT_EQ(tok.token_text(309), "<|mask|>");
  EXPECT_EQ(tok.token_text(999), "");
}

TEST(Tokenizer, DecodeHidesControlTokensUnlessAsked) {
  Tokenizer tok = model_tokenizer();
  std::vector<int32_t> ids = tok.encode("<|im_start|>user\nhi<|im_end|><|mask|>", true);
  EXPECT_EQ(tok.decode(ids, false), "user\nhi");
  EXPECT_EQ(tok.decode(ids, true), "<|im_start|>user\nhi<|im_end|><|mask|>");
  std::vector<int32_t> bad = {-5, 104, 1000, 105};
  EXPECT_EQ(tok.decode(bad, true), "hi");
}

TEST(Tokenizer, EmptyTokenizer) {
  Tokenizer tok;
  EXPECT_EQ(tok.n_vocab(), 0);
  EXPECT_TRUE(tok.encode("abc", true).empty());
  EXPECT_EQ(tok.decode(std::vector<int32_t>{1, 2}, true), "");
  EXPECT_EQ(tok.eos_id(), -1);
}

void expect_splits(const char* name, const std::vector<std::vector<std::string>>& expected) {
  auto pre = PreTokenizer::create(name);
  ASSERT_TRUE(pre.ok()) << pre.status().to_string();
  for (size_t i = 0; i < dloop::testing::kPretokTexts.size(); ++i) {
    std::vector<std::string_view> pieces;
    pre->split(dloop::testing::kPretokTexts[i], pieces);
    EXPECT_EQ(std::vector<std::string>(pieces.begin(), pieces.end()), expected[i]) << name << " text #" << i;
  }
}

TEST(PreTokenizer, MatchesPythonRegex) {
  expect_splits("qwen2", dloop::testing::kPretokQwen2);
  expect_splits("deepseek-r1-qwen", dloop::testing::kPretokQwen2);
  expect_splits("llama3", dloop::testing::kPretokLlama3);
  expect_splits("llama-bpe", dloop::testing::kPretokLlama3);
  expect_splits("gpt2", dloop::testing::kPretokGpt2);
  expect_splits("default", dloop::testing::kPretokGpt2);
}

TEST(PreTokenizer, InvalidUtf8BecomesItsOwnPieces) {
  auto pre = PreTokenizer::create("qwen2");
  ASSERT_TRUE(pre.ok());
  std::vector<std::string_view> pieces;
  std::string text = "ab\xff\xfe cd\xc3";
  pre->split(text, pieces);
  std::vector<std::string> got(pieces.begin(), pieces.end());
  EXPECT_EQ(got, (std::vector<std::string>{"ab", "\xff\xfe", " cd", "\xc3"}));
}

TEST(PreTokenizer, UnknownNameIsAnError) {
  auto pre = PreTokenizer::create("tekken");
  ASSERT_FALSE(pre.ok());
  EXPECT_EQ(pre.status().code(), base::Code::kUnimplemented);
  EXPECT_NE(pre.status().message().find("'tekken'"), std::string::npos);
}

TEST(Tokenizer, MergeRanksAndTies) {
  TestVocab v;
  v.merges = {"b c", "a b", "a a"};  // tokens 256 "bc", 257 "ab", 258 "aa"
  Tokenizer tok = must(tokenizer_of(vocab_builder(v)));
  EXPECT_EQ(tok.encode("abc", false), (std::vector<int32_t>{'a', 256}));  // "b c" has the lower rank
  EXPECT_EQ(tok.encode("ab", false), (std::vector<int32_t>{257}));
  EXPECT_EQ(tok.encode("aaa", false), (std::vector<int32_t>{258, 'a'}));  // leftmost first on a tie
  EXPECT_EQ(tok.encode("aaaa", false), (std::vector<int32_t>{258, 258}));
}

TEST(Tokenizer, DigitGroupingDependsOnThePreTokenizer) {
  TestVocab v;
  v.merges = {"1 2", "12 3"};  // 256 "12", 257 "123"
  v.pre = "llama3";
  EXPECT_EQ(must(tokenizer_of(vocab_builder(v))).encode("1234", false), (std::vector<int32_t>{257, '4'}));
  v.pre = "qwen2";
  EXPECT_EQ(must(tokenizer_of(vocab_builder(v))).encode("1234", false),
            (std::vector<int32_t>{'1', '2', '3', '4'}));
  v.pre = "gpt2";
  EXPECT_EQ(must(tokenizer_of(vocab_builder(v))).encode("1234", false), (std::vector<int32_t>{257, '4'}));
}

TEST(Tokenizer, MultiByteMerges) {
  TestVocab v;
  v.merges = {alphabet_text("\xc3") + " " + alphabet_text("\xa9"), "Ġ c", "Ġc a"};  // é, " c", " ca"
  Tokenizer tok = must(tokenizer_of(vocab_builder(v)));
  EXPECT_EQ(tok.encode("café", false), (std::vector<int32_t>{'c', 'a', 'f', 256}));
  EXPECT_EQ(tok.encode(" ca", false), (std::vector<int32_t>{258}));
  EXPECT_EQ(tok.token_text(256), "é");
  EXPECT_EQ(tok.encode("\xc3", false), (std::vector<int32_t>{0xc3}));  // a lone lead byte stays a byte
}

TEST(Tokenizer, SpecialTokenMatching) {
  TestVocab v;
  v.extras = {{"<|im_start|>", 3}, {"<|im", 3}, {"<tool>", 4}, {"<tool>x", 4}};  // 256 .. 259
  Tokenizer tok = must(tokenizer_of(vocab_builder(v)));
  EXPECT_EQ(tok.encode("<|im_start|>a", true), (std::vector<int32_t>{256, 'a'}));  // longest wins
  EXPECT_EQ(tok.encode("<|im_end|>", true), (std::vector<int32_t>{257, '_', 'e', 'n', 'd', '|', '>'}));
  std::vector<int32_t> plain = tok.encode("<|im", false);
  EXPECT_EQ(plain, (std::vector<int32_t>{'<', '|', 'i', 'm'}));
  // USER_DEFINED tokens are matched whether or not parse_special is set.
  EXPECT_EQ(tok.encode("a<tool>b", false), (std::vector<int32_t>{'a', 258, 'b'}));
  EXPECT_EQ(tok.encode("<tool>x", false), (std::vector<int32_t>{259}));
  EXPECT_EQ(tok.decode(std::vector<int32_t>{256, 258, 'z'}, false), "<tool>z");
  EXPECT_EQ(tok.find_special("<tool>"), 258);
  EXPECT_TRUE(tok.is_control(257));
  EXPECT_EQ(tok.token_type(258), TokenType::kUserDefined);
}

TEST(Tokenizer, SpecialIdsOutsideTheVocabularyAreIgnored) {
  TestVocab v;
  auto b = vocab_builder(v);
  b.u32("tokenizer.ggml.eos_token_id", 100000).u32("tokenizer.ggml.mask_token_id", 7).boolean(
      "tokenizer.ggml.add_bos_token", true);
  Tokenizer tok = must(tokenizer_of(b));
  EXPECT_EQ(tok.eos_id(), -1);
  EXPECT_EQ(tok.mask_id(), 7);
  EXPECT_EQ(tok.bos_id(), -1);
  EXPECT_TRUE(tok.add_bos());
}

void expect_load_error(const dloop::testing::GgufBuilder& b, base::Code code, const std::string& needle) {
  auto t = tokenizer_of(b);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), code) << t.status().message();
  EXPECT_NE(t.status().message().find(needle), std::string::npos) << t.status().message();
}

TEST(Tokenizer, LoadErrors) {
  dloop::testing::GgufBuilder none;
  none.string("general.architecture", "llada");
  expect_load_error(none, base::Code::kNotFound, "key 'tokenizer.ggml.model' not found");
  dloop::testing::GgufBuilder spm = none;
  spm.string("tokenizer.ggml.model", "llama");
  expect_load_error(spm, base::Code::kUnimplemented, "tokenizer.ggml.model 'llama' is not supported");
  TestVocab v;
  v.pre = "tekken";
  expect_load_error(vocab_builder(v), base::Code::kUnimplemented, "unknown pre-tokenizer 'tekken'");
  dloop::testing::GgufBuilder no_merges = none;
  no_merges.string("tokenizer.ggml.model", "gpt2").string_array("tokenizer.ggml.tokens", {"a"});
  expect_load_error(no_merges, base::Code::kInvalidArgument, "no usable token for byte 0x00");
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(alphabet_text(std::string(1, static_cast<char>(b))));
  dloop::testing::GgufBuilder merges_missing = none;
  merges_missing.string("tokenizer.ggml.model", "gpt2").string_array("tokenizer.ggml.tokens", bytes);
  expect_load_error(merges_missing, base::Code::kNotFound, "key 'tokenizer.ggml.merges' not found");
  dloop::testing::GgufBuilder bad_types = none;
  bad_types.string("tokenizer.ggml.model", "gpt2").string_array("tokenizer.ggml.tokens", bytes);
  bad_types.i32_array("tokenizer.ggml.token_type", {1, 1}).string_array("tokenizer.ggml.merges", {});
  expect_load_error(bad_types, base::Code::kInvalidArgument, "2 entries for 256 tokens");
  auto wrong_type = vocab_builder(TestVocab{});
  wrong_type.string("tokenizer.ggml.eos_token_id", "2");
  expect_load_error(wrong_type, base::Code::kInvalidArgument, "key 'tokenizer.ggml.eos_token_id': expected u32");
  dloop::testing::GgufBuilder empty = none;
  empty.string("tokenizer.ggml.model", "gpt2").string_array("tokenizer.ggml.tokens", {});
  expect_load_error(empty, base::Code::kInvalidArgument, "0 tokens");
}

TEST(Tokenizer, BadMergesAreSkipped) {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.push_back(alphabet_text(std::string(1, static_cast<char>(b))));
  tokens.push_back("ab");  // 256
  dloop::testing::GgufBuilder b;
  b.string("tokenizer.ggml.model", "gpt2").string("tokenizer.ggml.pre", "qwen2");
  b.string_array("tokenizer.ggml.tokens", tokens);
  // Malformed, result not a token, half not a token, then one good merge.
  b.string_array("tokenizer.ggml.merges", {"a", "q r", "a  b", "a b"});
  Tokenizer tok = must(tokenizer_of(b));
  EXPECT_EQ(tok.encode("ab", false), (std::vector<int32_t>{256}));
  EXPECT_EQ(tok.encode("qr", false), (std::vector<int32_t>{'q', 'r'}));
}

// Random strings mixing ASCII words, multi-byte UTF-8, special-token text, whitespace and random
// (often invalid) bytes.
std::string random_text(uint64_t& state, const std::vector<std::string>& specials) {
  auto next = [&state]() {
    state += 0x9E3779B97F4A7C15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  static const std::vector<std::string> kPieces = {
      "the", " agent", "weather", " ", "  ", "\n", "\r\n", "\t", "'s", "123", "é", "日本", "😀", "Ω",
      "<|", "|>", "{\"a\": 1}", "\u00a0", "ab", "<tool", "<|im_start", ">",
  };
  std::string out;
  int n = static_cast<int>(next() % 24);
  for (int i = 0; i < n; ++i) {
    uint64_t r = next();
    switch (r % 4) {
      case 0: out += kPieces[(r >> 8) % kPieces.size()]; break;
      case 1: out += static_cast<char>((r >> 8) & 0xFF); break;
      case 2: if (!specials.empty()) out += specials[(r >> 8) % specials.size()]; break;
      default: out += static_cast<char>('a' + (r >> 8) % 26); break;
    }
  }
  return out;
}

void expect_round_trips(const Tokenizer& tok, const std::vector<std::string>& specials, int n) {
  uint64_t state = 42;
  for (int i = 0; i < n; ++i) {
    std::string text = random_text(state, specials);
    for (bool parse_special : {true, false}) {
      std::vector<int32_t> ids = tok.encode(text, parse_special);
      ASSERT_EQ(tok.decode(ids, true), text) << "case " << i << " parse_special " << parse_special;
      for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < tok.n_vocab());
      if (!parse_special) {
        ASSERT_EQ(tok.decode(ids, false), text) << "case " << i;
      }
    }
  }
}

TEST(Tokenizer, RandomBytesRoundTripModelVocab) {
  expect_round_trips(model_tokenizer(), {"<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|mask|>"}, 3000);
}

TEST(Tokenizer, RandomBytesRoundTripUnicodeVocab) {
  TestVocab v;
  v.pre = "llama3";
  v.merges = {alphabet_text("\xc3") + " " + alphabet_text("\xa9"), "Ġ a", "Ġa g", "1 2", "12 3",
              alphabet_text("\xe6") + " " + alphabet_text("\x97"),
              alphabet_text("\xe6\x97") + " " + alphabet_text("\xa5"), "Ġ Ġ", "ĠĠ ĠĠ"};
  v.extras = {{"<|im_start|>", 3}, {"<tool>", 4}, {"<|im", 3}};
  expect_round_trips(must(tokenizer_of(vocab_builder(v))), {"<|im_start|>", "<tool>", "<|im"}, 3000);
}

TEST(Tokenizer, LongInputs) {
  TestVocab v;
  v.merges = {"Ġ Ġ", "ĠĠ ĠĠ", "a a", "aa aa"};
  Tokenizer tok = must(tokenizer_of(vocab_builder(v)));
  for (const std::string& text : {std::string(1 << 16, ' '), std::string(1 << 16, 'a'), std::string(1 << 16, '\xff')}) {
    std::vector<int32_t> ids = tok.encode(text, true);
    EXPECT_EQ(tok.decode(ids, true), text);
    EXPECT_LE(ids.size(), text.size());
  }
  std::vector<int32_t> ids = tok.encode(std::string(1 << 16, 'a'), true);
  EXPECT_EQ(ids.size(), (1u << 16) / 4);  // every 4 a's become one "aaaa" token
}

}  // namespace
}  // namespace dloop::engine
