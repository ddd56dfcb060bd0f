// Engine::tool_call on the random-weight llada test model: request errors (unsupported keywords,
// empty tool lists, colliding names, huge enums), tool choice modes, output_schema answers and
// generate() with response_format.
#include <gtest/gtest.h>

#include "dloop/base/json_schema.h"
#include "dloop/engine/tool_call.h"

namespace dloop::engine {
namespace {

using base::Json;

const std::string kModel = std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/llada-f32.gguf";

Engine& engine() {
  static std::unique_ptr<Engine> e = [] {
    auto opened = Engine::open({kModel, 1, {}});
    EXPECT_TRUE(opened.ok()) << opened.status().message();
    return std::move(opened).value();
  }();
  return *e;
}

Json parse(const std::string& s) {
  auto j = Json::parse(s);
  EXPECT_TRUE(j.ok()) << s;
  return *j;
}

ToolDefinition weather() {
  return {"get_weather", "Get the weather.",
          parse(R"({"type": "object", "properties": {"city": {"type": "string", "maxLength": 12},
                    "days": {"type": "integer", "minimum": 1, "maximum": 7},
                    "units": {"enum": ["c", "f"]}, "alerts": {"type": "boolean"}},
                    "required": ["city", "days"]})")};
}

// The random test models have a 256-token context: a short raw prompt instead of the rendered tools.
ToolCallRequest request(std::vector<ToolDefinition> tools, ToolChoice choice = {}) {
  ToolCallRequest r;
  r.raw_prompt = "<|im_start|>user\nWeather in Paris for 3 days?<|im_end|>\n<|im_start|>assistant\n";
  r.tools = std::move(tools);
  r.tool_choice = std::move(choice);
  return r;
}

std::string error_of(const ToolCallRequest& r) {
  auto res = engine().tool_call(r);
  EXPECT_FALSE(res.ok());
  return res.ok() ? "" : res.status().message();
}

TEST(ToolCallErrors, UnsupportedKeywordNamesToolAndPath) {
  ToolDefinition t = weather();
  t.parameters.find("properties")->find("city")->set("format", "date");
  const std::string e = error_of(request({t}));
  EXPECT_NE(e.find("tools[0] 'get_weather'"), std::string::npos) << e;
  EXPECT_NE(e.find("#/properties/city"), std::string::npos) << e;
  EXPECT_NE(e.find("format"), std::string::npos) << e;
  // pattern is refused for decoding too: the hint does not suggest it.
  EXPECT_EQ(e.find("use pattern"), std::string::npos) << e;
  EXPECT_NE(e.find("nor is pattern: state the expected format in the description"), std::string::npos) << e;
}

TEST(ToolCallErrors, PatternIsRefusedForDecoding) {
  ToolDefinition t = weather();
  t.parameters.find("properties")->find("city")->set("pattern", "^[A-Z]");
  const std::string e = error_of(request({t}));
  EXPECT_NE(e.find("#/properties/city: keyword 'pattern'"), std::string::npos) << e;
}

TEST(ToolCallErrors, EmptyToolListWithRequired) {
  const std::string e = error_of(request({}, ToolChoice{ToolChoice::Kind::kRequired, ""}));
  EXPECT_NE(e.find("no tools are offered"), std::string::npos) << e;
}

TEST(ToolCallErrors, CollidingNames) {
  const std::string e = error_of(request({weather(), weather()}));
  EXPECT_NE(e.find("'get_weather' is offered twice"), std::string::npos) << e;
  ToolDefinition unnamed = weather();
  unnamed.name = "";
  EXPECT_NE(error_of(request({unnamed})).find("no name"), std::string::npos);
}

TEST(ToolCallErrors, HugeEnum) {
  ToolDefinition t = weather();
  Json values = Json::array();
  for (int i = 0; i < 1000; ++i) values.push_back(Json(std::string("v").append(std::to_string(i))));
  t.parameters.find("properties")->find("units")->set("enum", values);
  const std::string e = error_of(request({t}));
  EXPECT_NE(e.find("#/properties/units: enum has 1000 values"), std::string::npos) << e;
}

TEST(ToolCallErrors, NamedToolMustBeOfferedAndParametersAnObject) {
  EXPECT_NE(error_of(request({weather()}, ToolChoice::named("nope"))).find("'nope'"), std::string::npos);
  ToolDefinition t = weather();
  t.parameters = parse(R"({"type": "string"})");
  EXPECT_NE(error_of(request({t})).find("must describe an object"), std::string::npos);
  ToolDefinition empty_int = weather();
  empty_int.parameters.find("properties")->set("days", parse(R"({"type": "integer", "exclusiveMinimum": 1, "exclusiveMaximum": 2})"));
  EXPECT_NE(error_of(request({empty_int})).find("#/properties/days: no integer"), std::string::npos);
}

TEST(ToolCall, RequiredCallValidates) {
  auto r = request({weather()}, ToolChoice{ToolChoice::Kind::kRequired, ""});
  auto res = engine().tool_call(r);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_TRUE(res->is_call);
  EXPECT_EQ(res->name, "get_weather");
  auto schema = base::Schema::compile(weather().parameters);
  ASSERT_TRUE(schema.ok());
  auto args = Json::parse(res->arguments);
  ASSERT_TRUE(args.ok()) << res->arguments;
  EXPECT_TRUE(schema->validate(*args).ok()) << res->arguments;
  EXPECT_NE(args->find("city"), nullptr);
  EXPECT_GT(res->forward_passes, 0);
  EXPECT_LT(res->forward_passes, 64);
}

// Grounded values on random weights: whatever the model prefers, the string is a span of the
// user's message at word boundaries and the integer the message's only number in range.
TEST(ToolCall, GroundedValuesAreSpansOfTheConversation) {
  auto r = request({weather()}, ToolChoice{ToolChoice::Kind::kRequired, ""});
  r.ground_values = true;
  for (ReasoningEffort effort : {ReasoningEffort::kLow, ReasoningEffort::kHigh}) {
    r.effort = effort;
    auto res = engine().tool_call(r);
    ASSERT_TRUE(res.ok()) << res.status().message();
    auto args = Json::parse(res->arguments);
    ASSERT_TRUE(args.ok()) << res->arguments;
    const std::string user = " Weather in Paris for 3 days? ";
    const std::string city = args->find("city")->as_string();
    EXPECT_FALSE(city.empty());
    EXPECT_NE(user.find(" " + city + " "), std::string::npos) << res->arguments;
    EXPECT_EQ(args->find("days")->as_int(), 3) << res->arguments;
  }
}

// x-dloop-grounded is a hint for the decoder: the prompt shows the tools without it.
TEST(ToolCall, DecodingHintsAreNotShownToTheModel) {
  GenerateRequest r;
  r.messages = {{"user", "Paris?"}};
  r.tools = {parse(R"({"name": "w", "parameters": {"type": "object", "properties": {
                 "c": {"type": "string", "x-dloop-grounded": true},
                 "x-dloop-grounded": {"type": "array", "items": {"type": "string", "x-dloop-grounded": true}}}}})"),
             parse(R"({"type": "function", "function": {"name": "v", "parameters": {"type": "object",
                 "properties": {"d": {"type": "string", "x-dloop-grounded": false}}}}})")};
  const std::string prompt = engine().render_prompt(r);
  EXPECT_NE(prompt.find(R"("c": {"type": "string"})"), std::string::npos) << prompt;
  // A property of that name stays.
  EXPECT_NE(prompt.find(R"("x-dloop-grounded": {"type": "array", "items": {"type": "string"}})"), std::string::npos)
      << prompt;
  EXPECT_NE(prompt.find(R"("d": {"type": "string"})"), std::string::npos) << prompt;
}

TEST(ToolCall, NamedChoiceAmongSeveral) {
  ToolDefinition other{"send_email", "Send an email.",
                       parse(R"({"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]})")};
  auto res = engine().tool_call(request({weather(), other}, ToolChoice::named("send_email")));
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->name, "send_email");
  auto auto_res = engine().tool_call(request({weather(), other}));
  ASSERT_TRUE(auto_res.ok()) << auto_res.status().message();
  EXPECT_GE(auto_res->call_probability, 0.0);
  if (auto_res->is_call) { EXPECT_EQ(auto_res->name_scores.size(), 2u); }
}

TEST(ToolCall, NoneAnswersAndOutputSchemaIsValid) {
  auto r = request({weather()}, ToolChoice{ToolChoice::Kind::kNone, ""});
  r.answer_length = 16;
  r.string_slot_tokens = 8;
  auto res = engine().tool_call(r);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_FALSE(res->is_call);
  r.output_schema = parse(R"({"type": "object", "properties": {"ok": {"type": "boolean"},
                              "n": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}}, "required": ["ok", "n"]})");
  res = engine().tool_call(r);
  ASSERT_TRUE(res.ok()) << res.status().message();
  auto schema = base::Schema::compile(*r.output_schema);
  auto answer = Json::parse(res->answer);
  ASSERT_TRUE(answer.ok()) << res->answer;
  EXPECT_TRUE(schema->validate(*answer).ok()) << res->answer;
}

TEST(ToolCall, GenerateWithResponseFormat) {
  GenerateRequest g;
  g.messages = {{"user", "List two colours."}};
  g.response_format = parse(R"({"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 2, "maxItems": 3})");
  g.decode.gen_length = 32;
  auto res = engine().generate(g);
  ASSERT_TRUE(res.ok()) << res.status().message();
  auto v = Json::parse(res->text);
  ASSERT_TRUE(v.ok()) << res->text;
  ASSERT_TRUE(v->is_array());
  EXPECT_GE(v->size(), 2u);
  EXPECT_LE(v->size(), 3u);
}

TEST(ToolCall, ParsersAndPresets) {
  EXPECT_EQ(parse_reasoning_effort("medium"), ReasoningEffort::kMedium);
  EXPECT_FALSE(parse_reasoning_effort("max"));
  EXPECT_EQ(parse_tool_choice("none")->kind, ToolChoice::Kind::kNone);
  EXPECT_EQ(parse_tool_choice("get_x")->name, "get_x");
  for (auto e : {ReasoningEffort::kInstant, ReasoningEffort::kLow, ReasoningEffort::kMedium, ReasoningEffort::kHigh}) {
    EXPECT_EQ(reasoning_preset(e).effort, e);
    EXPECT_GT(reasoning_preset(e).threshold, 0.0);
  }
}

}  // namespace
}  // namespace dloop::engine
