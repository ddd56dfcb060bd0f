// Tokenizer::from_gguf: reads tokenizer.ggml.* from a GgufFile and builds the Impl tables. The
// vocabulary must contain a token for every byte, and a merge is kept only when its halves and
// result are tokens whose bytes concatenate (left + right == result), which is what makes
// encode/decode an exact round trip for any vocabulary. Thread-safety: builds a fresh Impl;
// reads the (immutable) file only.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "byte_alphabet.h"
#include "dloop/base/log.h"
#include "tokenizer_impl.h"

namespace dloop::engine {

using base::Result;
using base::Status;

namespace {

constexpr const char* kTokens = "tokenizer.ggml.tokens";
constexpr const char* kTypes = "tokenizer.ggml.token_type";
constexpr const char* kMerges = "tokenizer.ggml.merges";

bool is_special_type(TokenType t) { return t == TokenType::kControl || t == TokenType::kUserDefined; }

// Token types (all NORMAL when the key is absent); unknown values read as UNDEFINED.
Status load_types(const GgufFile& file, size_t n_vocab, std::vector<TokenType>& types) {
  types.assign(n_vocab, TokenType::kNormal);
  if (!file.has(kTypes)) return Status();
  DLOOP_ASSIGN_OR_RETURN(std::vector<int32_t> raw, file.get_i32_array(kTypes));
  if (raw.size() != n_vocab) {
    return base::invalid_argument(file.name() + ": key '" + kTypes + "': " + std::to_string(raw.size()) +
                                  " entries for " + std::to_string(n_vocab) + " tokens");
  }
  for (size_t i = 0; i < n_vocab; ++i) {
    types[i] = raw[i] >= 0 && raw[i] <= 6 ? static_cast<TokenType>(raw[i]) : TokenType::kUndefined;
  }
  return Status();
}

// The byte token table: the token whose text is the alphabet character of byte b, which must
// decode to exactly that byte.
Status load_byte_tokens(const GgufFile& file, const std::unordered_map<std::string_view, int32_t>& ids,
                        Tokenizer::Impl& t) {
  for (int b = 0; b < 256; ++b) {
    std::string ch = byte_char(static_cast<uint8_t>(b));
    auto it = ids.find(ch);
    bool ok = it != ids.end() && t.types[it->second] != TokenType::kControl &&
              t.bytes[it->second] == std::string(1, static_cast<char>(b));
    if (!ok) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02x", b);
      return base::invalid_argument(file.name() + ": key '" + kTokens + "': no usable token for byte " + hex +
                                    " ('" + ch + "'); a byte-level BPE vocabulary needs all 256");
    }
    t.byte_tokens[b] = it->second;
  }
  return Status();
}

Status load_merges(const GgufFile& file, const std::unordered_map<std::string_view, int32_t>& ids,
                   Tokenizer::Impl& t) {
  DLOOP_ASSIGN_OR_RETURN(std::span<const std::string_view> merges, file.get_string_array(kMerges));
  size_t skipped = 0;
  std::string joined;
  for (size_t rank = 0; rank < merges.size() && rank <= INT32_MAX; ++rank) {
    std::string_view m = merges[rank];
    size_t space = m.find(' ', 1);  // from 1, as llama.cpp: a left half may itself start with ' '
    auto left = space == std::string_view::npos ? ids.end() : ids.find(m.substr(0, space));
    auto right = space == std::string_view::npos ? ids.end() : ids.find(m.substr(space + 1));
    if (left == ids.end() || right == ids.end()) {
      ++skipped;
      continue;
    }
    joined.assign(m.substr(0, space));
    joined.append(m.substr(space + 1));
    auto result = ids.find(joined);
    bool ok = result != ids.end() && t.types[left->second] != TokenType::kControl &&
              t.types[right->second] != TokenType::kControl && t.types[result->second] != TokenType::kControl &&
              t.bytes[result->second].size() == t.bytes[left->second].size() + t.bytes[right->second].size() &&
              t.bytes[result->second] == t.bytes[left->second] + t.bytes[right->second];
    if (!ok) {
      ++skipped;
      continue;
    }
    t.merges.add(left->second, right->second, result->second, static_cast<int32_t>(rank));
  }
  if (skipped > 0) DLOOP_WARN(file.name(), ": skipped ", skipped, " of ", merges.size(), " tokenizer merges");
  return Status();
}

void index_specials(Tokenizer::Impl& t) {
  for (size_t id = 0; id < t.bytes.size(); ++id) {
    const std::string& text = t.bytes[id];
    if (!is_special_type(t.types[id]) || text.empty()) continue;
    auto i = static_cast<int32_t>(id);
    t.special_ids.emplace(text, i);
    t.specials_by_byte[static_cast<unsigned char>(text[0])].push_back({i, t.types[id] == TokenType::kControl});
  }
  for (auto& bucket : t.specials_by_byte) {
    std::stable_sort(bucket.begin(), bucket.end(), [&](const auto& a, const auto& b) {
      return t.bytes[a.id].size() > t.bytes[b.id].size();
    });
  }
}

// A special id key: -1 when absent; ignored with a warning when outside the vocabulary.
Result<int32_t> special_id(const GgufFile& file, const std::string& key, size_t n_vocab) {
  if (!file.has(key)) return -1;
  DLOOP_ASSIGN_OR_RETURN(uint32_t id, file.get_u32(key));
  if (id >= n_vocab) {
    DLOOP_WARN(file.name(), ": ", key, " = ", id, " is outside the vocabulary of ", n_vocab, "; ignored");
    return -1;
  }
  return static_cast<int32_t>(id);
}

Status load_special_ids(const GgufFile& file, Tokenizer::Impl& t) {
  size_t n = t.bytes.size();
  DLOOP_ASSIGN_OR_RETURN(t.bos, special_id(file, "tokenizer.ggml.bos_token_id", n));
  DLOOP_ASSIGN_OR_RETURN(t.eos, special_id(file, "tokenizer.ggml.eos_token_id", n));
  DLOOP_ASSIGN_OR_RETURN(t.eot, special_id(file, "tokenizer.ggml.eot_token_id", n));
  DLOOP_ASSIGN_OR_RETURN(t.pad, special_id(file, "tokenizer.ggml.padding_token_id", n));
  DLOOP_ASSIGN_OR_RETURN(t.mask, special_id(file, "tokenizer.ggml.mask_token_id", n));
  if (file.has("tokenizer.ggml.add_bos_token")) {
    DLOOP_ASSIGN_OR_RETURN(t.add_bos, file.get_bool("tokenizer.ggml.add_bos_token"));
  }
  return Status();
}

Status load_vocab(const GgufFile& file, Tokenizer::Impl& t) {
  DLOOP_ASSIGN_OR_RETURN(std::span<const std::string_view> tokens, file.get_string_array(kTokens));
  if (tokens.empty() || tokens.size() > static_cast<size_t>(INT32_MAX)) {
    return base::invalid_argument(file.name() + ": key '" + kTokens + "': " + std::to_string(tokens.size()) +
                                  " tokens (need 1 to 2^31 - 1)");
  }
  DLOOP_RETURN_IF_ERROR(load_types(file, tokens.size(), t.types));
  t.bytes.reserve(tokens.size());
  std::unordered_map<std::string_view, int32_t> ids;  // token text (alphabet) -> first id with it
  ids.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    t.bytes.push_back(is_special_type(t.types[i]) ? std::string(tokens[i]) : decode_alphabet(tokens[i]));
    ids.emplace(tokens[i], static_cast<int32_t>(i));
  }
  DLOOP_RETURN_IF_ERROR(load_byte_tokens(file, ids, t));
  return load_merges(file, ids, t);
}

}  // namespace

Result<Tokenizer> Tokenizer::from_gguf(const GgufFile& file) {
  DLOOP_ASSIGN_OR_RETURN(std::string model, file.get_string("tokenizer.ggml.model"));
  if (model != "gpt2") {
    return base::unimplemented(file.name() + ": tokenizer.ggml.model '" + model +
                               "' is not supported (only 'gpt2', byte-level BPE)");
  }
  std::string pre;
  if (file.has("tokenizer.ggml.pre")) {
    DLOOP_ASSIGN_OR_RETURN(pre, file.get_string("tokenizer.ggml.pre"));
  }
  if (pre.empty()) DLOOP_WARN(file.name(), ": no tokenizer.ggml.pre; using the default (gpt2) pre-tokenizer");
  auto impl = std::make_shared<Impl>();
  Result<PreTokenizer> p = PreTokenizer::create(pre);
  if (!p.ok()) return p.status().with_context(file.name());
  impl->pre = std::move(p).value();
  DLOOP_RETURN_IF_ERROR(load_vocab(file, *impl));
  DLOOP_RETURN_IF_ERROR(load_special_ids(file, *impl));
  index_specials(*impl);
  return Tokenizer(std::move(impl));
}

}  // namespace dloop::engine
