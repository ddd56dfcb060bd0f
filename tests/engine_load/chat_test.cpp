// Chat template tests: detection from template sources and exact rendered bytes for ChatML (with
// and without Hermes-style tools; the expected strings with tools were produced by the bundled
// model's recipe, models/recipe/chat_format.py render_prompt) and the Llama-3 style of LLaDA.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/engine/chat.h"
#include "dloop/engine/gguf.h"
#include "dloop/engine/tokenizer.h"

namespace dloop::engine {
namespace {

std::vector<base::Json> weather_tools() {
  auto a = base::Json::parse(
      R"({"name": "get_weather", "description": "Weather for a city", "parameters": {"type": "object",)"
      R"( "properties": {"city": {"type": "string"}}, "required": ["city"]}})");
  auto b = base::Json::parse(
      R"({"name": "add", "description": "Adds", "parameters": {"type": "object", "properties":)"
      R"( {"a": {"type": "number"}, "b": {"type": "number"}}}})");
  EXPECT_TRUE(a.ok() && b.ok());
  return {*a, *b};
}

const std::string kToolsBlock =
    "# Tools\n<tools>\n"
    R"({"name": "get_weather", "description": "Weather for a city", "parameters": {"type": "object", )"
    R"("properties": {"city": {"type": "string"}}, "required": ["city"]}})"
    "\n"
    R"({"name": "add", "description": "Adds", "parameters": {"type": "object", "properties": )"
    R"({"a": {"type": "number"}, "b": {"type": "number"}}}})"
    "\n</tools>\n"
    R"(Call a tool as <tool_call>{"name": NAME, "arguments": ARGS}</tool_call>, or answer the user.)";

TEST(ChatTemplate, Detection) {
  EXPECT_EQ(ChatTemplate::detect("{{ '<|im_start|>' + message['role'] }}").kind(), ChatTemplate::Kind::kChatMl);
  EXPECT_EQ(ChatTemplate::detect("{{ '<|start_header_id|>' + role }}").kind(), ChatTemplate::Kind::kLlama3);
  EXPECT_EQ(ChatTemplate::detect("").kind(), ChatTemplate::Kind::kChatMl);
  EXPECT_EQ(ChatTemplate::detect("{% for m in messages %}[INST]{% endfor %}").kind(), ChatTemplate::Kind::kChatMl);
  EXPECT_STREQ(ChatTemplate::detect("<|start_header_id|>").kind_name(), "llama3");
  EXPECT_STREQ(ChatTemplate::detect("x").kind_name(), "chatml");
}

TEST(ChatTemplate, DetectsTheTestModelsTemplate) {
  auto f = GgufFile::open(std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/dream-f32.gguf");
  ASSERT_TRUE(f.ok());
  auto src = (*f)->get_string("tokenizer.chat_template");
  ASSERT_TRUE(src.ok());
  EXPECT_EQ(ChatTemplate::detect(*src).kind(), ChatTemplate::Kind::kChatMl);
}

TEST(ChatTemplate, ChatMlSingleTurn) {
  ChatTemplate t = ChatTemplate::of_kind(ChatTemplate::Kind::kChatMl);
  std::vector<ChatMessage> m = {{"user", "What is the weather in Paris?"}};
  EXPECT_EQ(t.render(m, {}, true),
            "<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(t.render(m, {}, false), "<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n");
  EXPECT_EQ(t.render({}, {}, true), "<|im_start|>assistant\n");
}

TEST(ChatTemplate, ChatMlSystemAndTurns) {
  ChatTemplate t = ChatTemplate::of_kind(ChatTemplate::Kind::kChatMl);
  std::vector<ChatMessage> m = {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello."}, {"user", "Bye"}};
  EXPECT_EQ(t.render(m, {}, true),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n");
  // An empty system message without tools writes no system turn (the bundled model's template).
  std::vector<ChatMessage> empty_sys = {{"system", ""}, {"user", "Hi"}};
  EXPECT_EQ(t.render(empty_sys, {}, false), "<|im_start|>user\nHi<|im_end|>\n");
}

TEST(ChatTemplate, ChatMlWithToolsMatchesTheRecipe) {
  ChatTemplate t = ChatTemplate::of_kind(ChatTemplate::Kind::kChatMl);
  std::vector<ChatMessage> m = {
      {"system", "You are terse."},
      {"user", "Weather in Paris?"},
      {"assistant", R"(<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>)"},
      {"tool", R"({"temp": 21})"},
  };
  std::string expected =
      "<|im_start|>system\nYou are terse.\n\n" + kToolsBlock +
      "<|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"
      R"(<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>)"
      "<|im_end|>\n<|im_start|>tool\n{\"temp\": 21}<|im_end|>\n<|im_start|>assistant\n";
  EXPECT_EQ(t.render(m, weather_tools(), true), expected);
}

TEST(ChatTemplate, ChatMlToolsWithoutSystemText) {
  ChatTemplate t = ChatTemplate::of_kind(ChatTemplate::Kind::kChatMl);
  std::string expected = "<|im_start|>system\n" + kToolsBlock +
                         "<|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n";
  EXPECT_EQ(t.render({{"user", "Weather in Paris?"}}, weather_tools(), true), expected);
  EXPECT_EQ(t.render({{"system", ""}, {"user", "Weather in Paris?"}}, weather_tools(), true), expected);
}

TEST(ChatTemplate, Llama3StyleOfLlada) {
  ChatTemplate t = ChatTemplate::detect("{{ bos_token }}{% for m in messages %}<|start_header_id|>...");
  ASSERT_EQ(t.kind(), ChatTemplate::Kind::kLlama3);
  EXPECT_EQ(t.render({{"user", "Hello"}}, {}, true),
            "<|startoftext|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  std::vector<ChatMessage> m = {{"system", "Sys"}, {"user", "Q"}, {"assistant", "A"}, {"user", "Q2"}};
  EXPECT_EQ(t.render(m, {}, false),
            "<|startoftext|><|start_header_id|>system<|end_header_id|>\n\nSys<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nQ<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nA<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nQ2<|eot_id|>");
  std::string with_tools = t.render({{"user", "Q"}}, weather_tools(), true);
  EXPECT_EQ(with_tools, "<|startoftext|><|start_header_id|>system<|end_header_id|>\n\n" + kToolsBlock +
                            "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nQ<|eot_id|>"
                            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, Llama3BeginOfText) {
  ChatTemplate t = ChatTemplate::detect("<|begin_of_text|><|start_header_id|>");
  EXPECT_EQ(t.render({{"user", "x"}}, {}, false),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nx<|eot_id|>");
}

TEST(ChatTemplate, RenderedPromptTokenizesLikeTheGolden) {
  // tokenizer_cases.json case 5 is make_golden.py's chat_prompt("What is the weather in Paris?").
  auto f = GgufFile::open(std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/llada-f32.gguf");
  ASSERT_TRUE(f.ok());
  auto tok = Tokenizer::from_gguf(**f);
  ASSERT_TRUE(tok.ok());
  ChatTemplate t = ChatTemplate::detect(*(*f)->get_string("tokenizer.chat_template"));
  std::string prompt = t.render({{"user", "What is the weather in Paris?"}}, {}, true);
  std::vector<int32_t> expected = {307, 297, 267, 10, 87,  104, 266, 281, 258, 261, 101, 266, 289, 32, 277, 32,
                                   80,  97,  114, 273, 63, 308, 10,  307, 285, 115, 105, 263, 97, 110, 116, 10};
  EXPECT_EQ(tok->encode(prompt, true), expected);
}

}  // namespace
}  // namespace dloop::engine
