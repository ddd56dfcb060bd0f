// PCRE2-backed pre-tokenizer (see pre_tokenizer.h). The patterns are llama.cpp's
// (src/llama-vocab.cpp, llm_tokenizer_bpe), and GPT-2's original one for "gpt2"/"default".
#define PCRE2_CODE_UNIT_WIDTH 8
#include "pre_tokenizer.h"

#include <pcre2.h>

#include <array>

#include "byte_alphabet.h"
#include "dloop/base/log.h"

namespace dloop::engine {
namespace {

constexpr const char* kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N})"
    R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3})"
    R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char* kBailingMoe =
    R"('(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N})"
    R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)";

struct Known {
  const char* name;
  const char* canonical;
  const char* pattern;
};

constexpr std::array<Known, 13> kKnown = {{
    {"qwen2", "qwen2", kQwen2},
    {"deepseek-r1-qwen", "qwen2", kQwen2},
    {"kormo", "qwen2", kQwen2},
    {"f2llmv2", "qwen2", kQwen2},
    {"llama3", "llama3", kLlama3},
    {"llama-bpe", "llama3", kLlama3},
    {"llama-v3", "llama3", kLlama3},
    {"gpt2", "gpt2", kGpt2},
    {"default", "gpt2", kGpt2},
    {"bailingmoe", "bailingmoe", kBailingMoe},
    {"bailingmoe2", "bailingmoe", kBailingMoe},
    {"llada-moe", "bailingmoe", kBailingMoe},
    {"", "gpt2", kGpt2},  // llama.cpp: an empty name warns and uses the default
}};

}  // namespace

struct PreTokenizer::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

base::Result<PreTokenizer> PreTokenizer::create(std::string_view name) {
  const Known* known = nullptr;
  for (const Known& k : kKnown) {
    if (name == k.name) known = &k;
  }
  if (known == nullptr) {
    return base::unimplemented("tokenizer.ggml.pre: unknown pre-tokenizer '" + std::string(name) +
                               "' (known: qwen2, deepseek-r1-qwen, llama3, llama-bpe, gpt2, default, bailingmoe)");
  }
  int err = 0;
  PCRE2_SIZE err_offset = 0;
  auto code = std::make_shared<Code>();
  code->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(known->pattern), PCRE2_ZERO_TERMINATED,
                             PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &err_offset, nullptr);
  if (code->code == nullptr) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof(msg));
    return base::internal_error("pre-tokenizer '" + std::string(name) + "': PCRE2: " +
                                reinterpret_cast<const char*>(msg) + " at " + std::to_string(err_offset));
  }
  // JIT is an optimisation only: pcre2_match falls back to the interpreter when it is unavailable.
  (void)pcre2_jit_compile(code->code, PCRE2_JIT_COMPLETE);
  PreTokenizer p;
  p.name_ = known->canonical;
  p.code_ = std::move(code);
  return p;
}

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& out) const {
  if (text.empty()) return;
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code_->code, nullptr);
  DLOOP_ASSERT_MSG(md != nullptr, "pcre2_match_data_create_from_pattern: out of memory");
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t gap = 0;  // start of text not yet covered by a piece
  size_t pos = 0;
  while (pos < text.size()) {
    int rc = pcre2_match(code_->code, subject, text.size(), pos, 0, md, nullptr);
    if (rc <= 0) {  // no match (or a match error): the rest becomes a gap piece
      if (rc != PCRE2_ERROR_NOMATCH) DLOOP_WARN("pre-tokenizer ", name_, ": PCRE2 match error ", rc);
      break;
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    size_t begin = ov[0];
    size_t end = ov[1];
    if (end <= begin) {  // an empty match (none of the patterns has one): step over a character
      size_t n = begin < text.size() ? utf8_sequence_length(text, begin) : 1;
      pos = begin + (n == 0 ? 1 : n);
      continue;
    }
    if (begin > gap) out.push_back(text.substr(gap, begin - gap));
    out.push_back(text.substr(begin, end - begin));
    gap = pos = end;
  }
  if (gap < text.size()) out.push_back(text.substr(gap));
  pcre2_match_data_free(md);
}

}  // namespace dloop::engine
