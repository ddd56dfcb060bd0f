// Built-in chat templates. A model's Jinja template (tokenizer.chat_template) is not executed;
// detect() recognises its family from the source and render() writes the same bytes in C++:
//   ChatML (Qwen2, Dream, the bundled model):  <|im_start|>{role}\n{content}<|im_end|>\n ...
//   Llama-3 style (LLaDA-8B-Instruct):  BOS <|start_header_id|>{role}<|end_header_id|>\n\n{content}<|eot_id|> ...
// Tools are offered Hermes-style inside the system turn, as docs/model-format.md specifies:
// "{system}\n\n# Tools\n<tools>\n{tool JSON per line}\n</tools>\nCall a tool as ...". Not a Jinja
// engine. Thread-safety: a ChatTemplate is an immutable value; render() is thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dloop/base/json.h"

namespace dloop::engine {

struct ChatMessage {
  std::string role;     // "system", "user", "assistant", "tool" (written as given)
  std::string content;  // an assistant tool call is its text: <tool_call>{...}</tool_call>
};

class ChatTemplate {
 public:
  enum class Kind { kChatMl, kLlama3 };

  // ChatML when the source contains "<|im_start|>", Llama-3 style when it contains
  // "<|start_header_id|>", otherwise ChatML (llama.cpp's fallback, also for an empty source).
  // The Llama-3 BOS text is "<|begin_of_text|>" when the source names it, else LLaDA's
  // "<|startoftext|>".
  static ChatTemplate detect(std::string_view source);
  // A template of the given kind; bos_text is used by kLlama3 only.
  static ChatTemplate of_kind(Kind kind, std::string bos_text = "<|startoftext|>");

  Kind kind() const { return kind_; }
  const char* kind_name() const;  // "chatml", "llama3"

  // The prompt text for `messages`. The first message, when its role is "system", becomes the
  // system turn; the system turn is written when it has text or `tools` is non-empty (each tool
  // is a {"name", "description", "parameters"} object, written with Json::Style::kPython) and
  // omitted otherwise. Later messages are written in order with their roles. With
  // add_generation_prompt the text ends with the opening of an assistant turn. The Llama-3 text
  // starts with the BOS text, so encode it with parse_special and do not add another BOS.
  std::string render(const std::vector<ChatMessage>& messages, const std::vector<base::Json>& tools,
                     bool add_generation_prompt) const;

 private:
  ChatTemplate(Kind kind, std::string bos_text) : kind_(kind), bos_text_(std::move(bos_text)) {}
  Kind kind_;
  std::string bos_text_;
};

}  // namespace dloop::engine
