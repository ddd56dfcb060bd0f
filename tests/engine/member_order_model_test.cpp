// The model's member order (GGUF key dloop.tool_call.member_order): read at load and checked;
// with "mention" the decoder writes a call's top-level arguments in the order the request mentions
// their names, without it in the schema's order; the prompt shows the schema as given.
#include <gtest/gtest.h>

#include <cstdio>

#include "dloop/engine/engine.h"
#include "dloop/engine/random_model.h"
#include "dloop/engine/tool_call.h"
#include "small_model.h"

namespace dloop::engine {
namespace {

std::string write_model(const std::string& order, const std::string& tag) {
  RandomModelSpec spec = small_model_spec(2048);
  spec.tool_call_member_order = order;
  return write_small_model(spec, "order-" + tag);
}

ToolCallRequest request() {
  ToolCallRequest r;
  r.messages = {{"user", "Set the beta flag on, the gamma count to 3 and alpha on."}};
  r.tools = {{"configure", "Configure it.", *base::Json::parse(R"({"type": "object", "properties": {
      "alpha": {"type": "boolean"}, "beta": {"type": "boolean"}, "gamma": {"type": "integer"},
      "delta": {"type": "boolean"}}, "required": ["alpha", "beta", "gamma", "delta"]})")}};
  r.tool_choice = ToolChoice{ToolChoice::Kind::kRequired, ""};
  r.answer_length = 48;
  return r;
}

std::vector<std::string> keys_of(const base::Json& args) {
  std::vector<std::string> out;
  for (const auto& [k, v] : args.as_object()) out.push_back(k);
  return out;
}

// Opens a model with dloop.tool_call.member_order = order ("" for none), checks what the config
// read, and decodes request() with it.
ToolCallResult decode_with(const std::string& order, const std::string& config_order) {
  const std::string path = write_model(order, order.empty() ? "none" : order);
  auto e = Engine::open({path, 1, {}});
  std::remove(path.c_str());
  EXPECT_TRUE(e.ok()) << e.status().message();
  if (!e.ok()) return {};
  EXPECT_EQ((*e)->model().config().tool_call_member_order, config_order);
  auto r = (*e)->tool_call(request());
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : ToolCallResult{};
}

TEST(MemberOrder, MentionOrderLaysTheCallOutAsTheRequestNamesItsParameters) {
  const ToolCallResult r = decode_with("mention", "mention");
  ASSERT_TRUE(r.is_call);
  EXPECT_EQ(keys_of(r.arguments_json), (std::vector<std::string>{"beta", "gamma", "alpha", "delta"}));
  EXPECT_EQ(r.arguments.find("{\"beta\": "), 0u) << r.arguments;
  // The prompt lists the schema in its own order.
  EXPECT_NE(r.prompt_text.find("\"alpha\": {\"type\": \"boolean\"}, \"beta\""), std::string::npos) << r.prompt_text;
}

TEST(MemberOrder, WithoutTheKeyOrWithSchemaTheSchemasOrder) {
  for (const std::string order : {"", "schema"}) {
    const ToolCallResult r = decode_with(order, "");
    ASSERT_TRUE(r.is_call) << order;
    EXPECT_EQ(keys_of(r.arguments_json), (std::vector<std::string>{"alpha", "beta", "gamma", "delta"}));
  }
}

TEST(MemberOrder, AnUnknownOrderIsALoadError) {
  const std::string path = write_model("sideways", "bad");
  auto e = Engine::open({path, 1, {}});
  std::remove(path.c_str());
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("dloop.tool_call.member_order must be the string \"schema\" or \"mention\""),
            std::string::npos)
      << e.status().message();
}

}  // namespace
}  // namespace dloop::engine
