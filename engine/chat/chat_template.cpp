// ChatML and Llama-3 prompt rendering (see chat.h). The byte layout follows the GGUF reference
// (gguf-and-architectures.md, section 10) and docs/model-format.md; tests/engine_load/chat_test.cpp
// pins the exact strings. Pure; thread-safe.
#include "dloop/engine/chat.h"

#include "dloop/base/json_schema.h"

namespace dloop::engine {
namespace {

constexpr std::string_view kToolsFooter =
    R"(Call a tool as <tool_call>{"name": NAME, "arguments": ARGS}</tool_call>, or answer the user.)";

// A tool as the model is shown it: its parameters (`parameters`, or OpenAI's
// `function.parameters`) without dloop's decoding hints.
base::Json shown(const base::Json& tool) {
  base::Json out = tool;
  if (base::Json* p = out.find("parameters")) *p = base::without_decoding_hints(*p);
  if (base::Json* f = out.find("function")) {
    if (base::Json* p = f->find("parameters")) *p = base::without_decoding_hints(*p);
  }
  return out;
}

// "# Tools\n<tools>\n{tool}\n...</tools>\n{footer}", or "" without tools.
std::string tools_section(const std::vector<base::Json>& tools) {
  if (tools.empty()) return "";
  std::string out = "# Tools\n<tools>\n";
  for (const base::Json& tool : tools) out += shown(tool).dump(base::Json::Style::kPython) + "\n";
  out += "</tools>\n";
  out += kToolsFooter;
  return out;
}

// The system turn's text: the system message and the tools section, joined by a blank line.
std::string system_text(std::string_view system, const std::vector<base::Json>& tools) {
  std::string tools_text = tools_section(tools);
  if (system.empty()) return tools_text;
  if (tools_text.empty()) return std::string(system);
  return std::string(system) + "\n\n" + tools_text;
}

struct Turns {
  std::string_view system;   // first message's content when it is a system message
  size_t first_message = 0;  // index of the first message after that system message
};

Turns split_system(const std::vector<ChatMessage>& messages) {
  if (!messages.empty() && messages[0].role == "system") return {messages[0].content, 1};
  return {};
}

}  // namespace

ChatTemplate ChatTemplate::detect(std::string_view source) {
  if (source.find("<|im_start|>") != std::string_view::npos) return of_kind(Kind::kChatMl);
  if (source.find("<|start_header_id|>") != std::string_view::npos) {
    bool llama = source.find("<|begin_of_text|>") != std::string_view::npos;
    return of_kind(Kind::kLlama3, llama ? "<|begin_of_text|>" : "<|startoftext|>");
  }
  return of_kind(Kind::kChatMl);
}

ChatTemplate ChatTemplate::of_kind(Kind kind, std::string bos_text) { return ChatTemplate(kind, std::move(bos_text)); }

const char* ChatTemplate::kind_name() const { return kind_ == Kind::kChatMl ? "chatml" : "llama3"; }

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages, const std::vector<base::Json>& tools,
                                 bool add_generation_prompt) const {
  Turns turns = split_system(messages);
  std::string system = system_text(turns.system, tools);
  const bool chatml = kind_ == Kind::kChatMl;
  // A turn is head + role + mid + content + tail.
  const char* head = chatml ? "<|im_start|>" : "<|start_header_id|>";
  const char* mid = chatml ? "\n" : "<|end_header_id|>\n\n";
  const char* tail = chatml ? "<|im_end|>\n" : "<|eot_id|>";
  auto turn = [&](std::string& out, std::string_view role, std::string_view content) {
    out.append(head).append(role).append(mid).append(content).append(tail);
  };
  std::string out = chatml ? "" : bos_text_;
  if (!system.empty()) turn(out, "system", system);
  for (size_t i = turns.first_message; i < messages.size(); ++i) turn(out, messages[i].role, messages[i].content);
  if (add_generation_prompt) out.append(head).append("assistant").append(mid);
  return out;
}

}  // namespace dloop::engine
