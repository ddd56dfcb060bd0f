// Byte-level BPE tokenizer (GPT-2 / Qwen2 / Llama-3 family) built from a GGUF file's
// tokenizer.ggml.* keys: token texts in the GPT-2 bytes-to-unicode alphabet, token types, merges
// ranked by position, the pre-tokenizer regex chosen by tokenizer.ggml.pre (PCRE2, Unicode
// classes), and the special ids. encode() followed by decode(..., true) returns the input bytes
// exactly, for any input including invalid UTF-8. Not a SentencePiece, WordPiece or Unigram
// tokenizer. Thread-safety: immutable after from_gguf(); copies share the tables; encode and
// decode may run concurrently from any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dloop/base/status.h"
#include "dloop/engine/gguf.h"

namespace dloop::engine {

// tokenizer.ggml.token_type values (llama.h).
enum class TokenType : int32_t {
  kUndefined = 0, kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6,
};

class Tokenizer {
 public:
  // An empty tokenizer (n_vocab() == 0): encode returns no ids, decode returns "".
  Tokenizer();

  // Builds the tokenizer from `file`'s metadata; the result does not reference the file.
  // Errors (naming the key): not_found for missing tokenizer.ggml.model, tokens or merges;
  // unimplemented for a model other than "gpt2" or an unknown tokenizer.ggml.pre; invalid_argument
  // for wrongly typed keys, a token_type array of the wrong length, or a vocabulary without a
  // token for each of the 256 bytes. Special ids >= n_vocab are ignored with a warning (as
  // llama.cpp does). Merges whose parts or result are not in the vocabulary are skipped.
  static base::Result<Tokenizer> from_gguf(const GgufFile& file);

  // Token ids of `text`; never adds BOS (callers check add_bos()). CONTROL tokens are recognised
  // in the text only when parse_special is true; USER_DEFINED tokens always (as in llama.cpp and
  // Hugging Face tokenizers). Where several special tokens start at one position the longest wins.
  std::vector<int32_t> encode(std::string_view text, bool parse_special) const;
  // The bytes of `ids` concatenated. CONTROL tokens are rendered only when render_special is
  // true; ids outside [0, n_vocab) are skipped.
  std::string decode(std::span<const int32_t> ids, bool render_special) const;
  // The bytes of one token, whatever its type ("" outside [0, n_vocab)).
  std::string token_text(int32_t id) const;

  int32_t n_vocab() const;
  // Special ids, -1 when the file does not name one.
  int32_t bos_id() const;
  int32_t eos_id() const;
  int32_t eot_id() const;
  int32_t pad_id() const;
  int32_t mask_id() const;
  bool add_bos() const;  // tokenizer.ggml.add_bos_token (false when absent)
  const std::string& pre_name() const;  // the pre-tokenizer in use ("qwen2", "llama3", "gpt2", ...)

  // The id of the CONTROL or USER_DEFINED token whose text is exactly `text`.
  std::optional<int32_t> find_special(std::string_view text) const;
  TokenType token_type(int32_t id) const;  // kUndefined outside [0, n_vocab)
  bool is_control(int32_t id) const { return token_type(id) == TokenType::kControl; }

  struct Impl;

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace dloop::engine
