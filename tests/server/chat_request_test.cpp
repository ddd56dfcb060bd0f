// parse_chat_request(): the OpenAI request fields dloop accepts, how messages map onto the chat
// template's roles, and the 400 answers (type, param, code, message) for malformed requests:
// a table-driven corpus of bad bodies, each with the field it must name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dloop/server/chat_request.h"

namespace dloop::server {
namespace {

ChatRequest ok(const std::string& body) {
  auto r = parse_chat_request(body);
  if (auto* e = std::get_if<ApiError>(&r)) {
    ADD_FAILURE() << "unexpected error: " << e->message << " (param " << e->param << ")";
    return {};
  }
  return std::get<ChatRequest>(r);
}

ApiError err(const std::string& body) {
  auto r = parse_chat_request(body);
  if (auto* e = std::get_if<ApiError>(&r)) return *e;
  ADD_FAILURE() << "expected an error for " << body;
  return {};
}

TEST(ChatRequest, MinimalRequestHasDloopDefaults) {
  ChatRequest r = ok(R"({"model":"default","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(r.model, "default");
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].role, "user");
  EXPECT_EQ(r.messages[0].content, "hi");
  EXPECT_EQ(r.tool_choice.kind, engine::ToolChoice::Kind::kNone);
  EXPECT_EQ(r.format, ResponseFormat::kText);
  EXPECT_EQ(r.temperature, 0.0);
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(r.effort, engine::ReasoningEffort::kLow);
}

TEST(ChatRequest, AllRolesMapOntoTheTemplate) {
  ChatRequest r = ok(R"({"model":"m","messages":[
    {"role":"developer","content":"be brief"},
    {"role":"user","content":[{"type":"text","text":"weather "},{"type":"text","text":"in Paris?"}]},
    {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
      "function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
    {"role":"tool","tool_call_id":"call_1","content":"{\"temp\":21}"},
    {"role":"assistant","content":"It is 21.","refusal":null,"annotations":[]},
    {"role":"system","content":"late system"}]})");
  ASSERT_EQ(r.messages.size(), 6u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[0].content, "be brief");
  EXPECT_EQ(r.messages[1].content, "weather in Paris?");
  EXPECT_EQ(r.messages[2].role, "assistant");
  EXPECT_EQ(r.messages[2].content, R"(<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>)");
  EXPECT_EQ(r.messages[3].role, "tool");
  EXPECT_EQ(r.messages[3].content, R"({"temp":21})");
  EXPECT_EQ(r.messages[4].content, "It is 21.");
  EXPECT_EQ(r.messages[5].role, "system");
}

TEST(ChatRequest, ToolsChoiceAndFormat) {
  const std::string tools = R"("tools":[
    {"type":"function","function":{"name":"get_weather","description":"d",
      "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"strict":true}},
    {"type":"function","function":{"name":"get_time"}}])";
  ChatRequest a = ok(R"({"model":"m","messages":[{"role":"user","content":"x"}],)" + tools + "}");
  ASSERT_EQ(a.tools.size(), 2u);
  EXPECT_EQ(a.tool_choice.kind, engine::ToolChoice::Kind::kAuto);
  EXPECT_EQ(a.tools[1].parameters.dump(), R"({"type":"object","properties":{}})");

  ChatRequest n = ok(R"({"model":"m","messages":[{"role":"user","content":"x"}],)" + tools +
                     R"(,"tool_choice":{"type":"function","function":{"name":"get_time"}},"parallel_tool_calls":false})");
  EXPECT_EQ(n.tool_choice.kind, engine::ToolChoice::Kind::kNamed);
  EXPECT_EQ(n.tool_choice.name, "get_time");
  EXPECT_FALSE(n.parallel_tool_calls);

  ChatRequest al = ok(R"({"model":"m","messages":[{"role":"user","content":"x"}],)" + tools +
                      R"(,"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"get_weather"}}]}}})");
  ASSERT_EQ(al.tools.size(), 1u);
  EXPECT_EQ(al.tools[0].name, "get_weather");
  EXPECT_EQ(al.tool_choice.kind, engine::ToolChoice::Kind::kRequired);

  ChatRequest js = ok(R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema",
    "json_schema":{"name":"city_info","strict":true,"schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}}})");
  EXPECT_EQ(js.format, ResponseFormat::kJsonSchema);
  EXPECT_EQ(js.schema_name, "city_info");
  ASSERT_TRUE(js.schema.has_value());

  ChatRequest jo = ok(R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}})");
  EXPECT_EQ(jo.format, ResponseFormat::kJsonObject);
}

TEST(ChatRequest, DecodingKnobsAndExtensions) {
  ChatRequest r = ok(R"({"model":"m","messages":[{"role":"user","content":"x"}],"max_completion_tokens":32,
    "temperature":0.7,"top_p":0.9,"seed":42,"reasoning_effort":"instant","stream":true,
    "stream_options":{"include_usage":true},"diffusing":true,"stop":["\n\n","END"],"n":1,
    "user":"u1","metadata":{"k":"v"},"realtime":true,"logprobs":false})");
  EXPECT_EQ(r.max_completion_tokens, 32);
  EXPECT_DOUBLE_EQ(r.temperature, 0.7);
  EXPECT_DOUBLE_EQ(r.top_p, 0.9);
  EXPECT_EQ(r.seed.value_or(0), 42u);
  EXPECT_EQ(r.effort, engine::ReasoningEffort::kInstant);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_TRUE(r.diffusing);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"\n\n", "END"}));
  EXPECT_EQ(ok(R"({"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":16})").max_completion_tokens, 16);
  EXPECT_EQ(ok(R"({"model":"m","messages":[{"role":"user","content":"x"}],"reasoning_effort":"high"})").effort,
            engine::ReasoningEffort::kHigh);
}

TEST(ChatRequest, ErrorObjectHasTheOpenAiShape) {
  ApiError e = err(R"({"model":"m","messages":[{"role":"user","content":5}]})");
  EXPECT_EQ(e.to_json().dump(),
            R"({"error":{"message":"Invalid type for 'messages[0].content': expected a string or an array of content parts, but got number.","type":"invalid_request_error","param":"messages[0].content","code":"invalid_type"}})");
  ApiError bad = err("{\"model\": \"m\", \"messages\": [}");
  EXPECT_EQ(bad.to_json().find("error")->find("param")->type(), base::Json::Type::kNull);
}

struct Case {
  const char* body;
  const char* param;  // expected param ("" for null)
  const char* code;
};

// The malformed-request corpus: every entry must be a 400 naming `param` with `code`.
const Case kCorpus[] = {
    {"", "", "invalid_json"},
    {"not json", "", "invalid_json"},
    {"{\"model\":\"m\",", "", "invalid_json"},
    {"[1,2]", "", "invalid_json"},
    {"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}", "", "invalid_json"},
    {"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"\xc3\"}]}", "", "invalid_json"},
    {R"({"messages":[{"role":"user","content":"x"}]})", "model", "missing_required_parameter"},
    {R"({"model":7,"messages":[{"role":"user","content":"x"}]})", "model", "invalid_type"},
    {R"({"model":"m"})", "messages", "missing_required_parameter"},
    {R"({"model":"m","messages":{}})", "messages", "invalid_type"},
    {R"({"model":"m","messages":[]})", "messages", "invalid_value"},
    {R"({"model":"m","messages":["hi"]})", "messages[0]", "invalid_type"},
    {R"({"model":"m","messages":[{"content":"x"}]})", "messages[0].role", "missing_required_parameter"},
    {R"({"model":"m","messages":[{"role":"robot","content":"x"}]})", "messages[0].role", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user"}]})", "messages[0].content", "missing_required_parameter"},
    {R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]})", "messages[0].content[0].type", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x","colour":"red"}]})", "messages[0].colour", "unknown_parameter"},
    {R"({"model":"m","messages":[{"role":"tool","content":"x"}]})", "messages[0].tool_call_id", "missing_required_parameter"},
    {R"({"model":"m","messages":[{"role":"tool","tool_call_id":"call_9","content":"x"}]})", "messages[0].tool_call_id", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{}}}]}]})", "messages[0].tool_calls[0].function.arguments", "invalid_type"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"temperature":"hot"})", "temperature", "invalid_type"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"temperature":3})", "temperature", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"top_p":0})", "top_p", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"max_completion_tokens":0})", "max_completion_tokens", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"max_completion_tokens":1.5})", "max_completion_tokens", "invalid_type"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"seed":"1"})", "seed", "invalid_type"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"reasoning_effort":"extreme"})", "reasoning_effort", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"stream":"yes"})", "stream", "invalid_type"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":true}})", "stream_options", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":{"bogus":1}})", "stream_options.bogus", "unknown_parameter"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"diffusing":true})", "diffusing", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"n":2})", "n", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"logprobs":true})", "logprobs", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"stop":[1]})", "stop", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"temprature":1})", "temprature", "unknown_parameter"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"tools":{}})", "tools", "invalid_type"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"custom","custom":{"name":"x"}}]})", "tools[0].type", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"bad name"}}]})", "tools[0].function.name", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":[]}}]})", "tools[0].function.parameters", "invalid_type"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"d":{"type":"string","format":"date"}}}}}]})", "tools", "invalid_schema"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"f"}}]})", "tools", "invalid_schema"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"required"})", "tool_choice", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"sometimes"})", "tool_choice", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}})", "tool_choice.function.name", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"xml"}})", "response_format.type", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema"}})", "response_format.json_schema", "invalid_type"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"a b","schema":{}}}})", "response_format.json_schema.name", "invalid_value"},
    {R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"string","pattern":"^a+$"}}}})", "response_format", "invalid_schema"},
};

TEST(ChatRequest, MalformedCorpusGets400NamingTheField) {
  for (const Case& c : kCorpus) {
    SCOPED_TRACE(c.body);
    ApiError e = err(c.body);
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.type, "invalid_request_error");
    EXPECT_EQ(e.param, c.param);
    EXPECT_EQ(e.code, c.code);
    EXPECT_FALSE(e.message.empty());
  }
}

TEST(ChatRequest, BadJsonNamesTheByteOffset) {
  ApiError e = err("{\"model\": \"m\",\n \"messages\": [}");
  EXPECT_NE(e.message.find("byte 29 (line 2, column 15)"), std::string::npos) << e.message;
}

TEST(ChatRequest, DeepNestingIsRefusedNotRecursed) {
  std::string deep(100000, '[');
  ApiError e = err("{\"model\":\"m\",\"messages\":" + deep);
  EXPECT_EQ(e.code, "invalid_json");
}

TEST(ChatRequest, ToolCallTextKeepsInvalidArgumentsVerbatim) {
  EXPECT_EQ(tool_call_text("f", R"({"a":1,"b":[true,null]})"), R"(<tool_call>{"name": "f", "arguments": {"a": 1, "b": [true, null]}}</tool_call>)");
  EXPECT_EQ(tool_call_text("f", "{oops"), R"(<tool_call>{"name": "f", "arguments": {oops}</tool_call>)");
}

}  // namespace
}  // namespace dloop::server
