// The shared, immutable state behind a Tokenizer: per-token bytes and types, the byte tokens,
// the merge table, the pre-tokenizer and the special-token index. Built by tokenizer_load.cpp,
// read by tokenizer.cpp. Private to engine/tokenizer. Thread-safety: immutable once built.
#pragma once

#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "bpe.h"
#include "dloop/engine/tokenizer.h"
#include "pre_tokenizer.h"

namespace dloop::engine {

struct Tokenizer::Impl {
  struct Special {
    int32_t id;
    bool control;  // CONTROL (matched only with parse_special) or USER_DEFINED (always)
  };

  std::vector<std::string> bytes;     // id -> the token's bytes (raw text for CONTROL/USER_DEFINED)
  std::vector<TokenType> types;       // id -> type
  std::array<int32_t, 256> byte_tokens{};  // byte -> id of its single-byte token
  BpeMerges merges;
  PreTokenizer pre;
  // Special tokens by the first byte of their text, longest first (then lowest id).
  std::array<std::vector<Special>, 256> specials_by_byte;
  std::unordered_map<std::string, int32_t> special_ids;  // text -> id (first id wins)
  int32_t bos = -1;
  int32_t eos = -1;
  int32_t eot = -1;
  int32_t pad = -1;
  int32_t mask = -1;
  bool add_bos = false;
};

}  // namespace dloop::engine
