// Pre-tokenizer: splits text into the pieces that BPE merges never cross, with the regex that
// tokenizer.ggml.pre names (llama.cpp's table), compiled by PCRE2 in UTF + UCP mode with
// PCRE2_MATCH_INVALID_UTF so invalid UTF-8 is never matched instead of failing the match. Text
// between matches (only invalid bytes, for the supported patterns) becomes pieces of its own, so
// the pieces always concatenate to the input. Private to engine/tokenizer. Thread-safety:
// immutable after create(); split() may run concurrently (each call has its own match data).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dloop/base/status.h"

namespace dloop::engine {

class PreTokenizer {
 public:
  // Known names: "qwen2" (also "deepseek-r1-qwen", "kormo", "f2llmv2"), "llama3" (also
  // "llama-bpe", "llama-v3"), "gpt2" (also "default"), "bailingmoe" (also "bailingmoe2",
  // "llada-moe"). Errors: unimplemented naming an unknown name; internal if PCRE2 rejects a pattern.
  static base::Result<PreTokenizer> create(std::string_view name);

  // The canonical name of the pattern in use ("qwen2", "llama3", "gpt2", "bailingmoe").
  const std::string& name() const { return name_; }
  // Appends the pieces of `text` to `out`; they concatenate to `text` exactly.
  void split(std::string_view text, std::vector<std::string_view>& out) const;

 private:
  struct Code;
  std::string name_;
  std::shared_ptr<const Code> code_;
};

}  // namespace dloop::engine
