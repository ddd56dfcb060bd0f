// The model's member order (GGUF key dloop.tool_call.member_order): read at load and checked;
// with "mention" the decoder writes a call's top-level arguments in the order the request mentions
// their names, without it in the schema's order; the prompt shows the schema as given.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "dloop/engine/engine.h"
#include "dloop/engine/random_model.h"
#include "dloop/engine/tool_call.h"

namespace dloop::engine {
namespace {

std::string write_model(const std::string& order, const std::string& tag) {
  RandomModelSpec spec;
  spec.n_layer = 1;
  spec.n_embd = 64;
  spec.n_head = spec.n_head_kv = 4;
  spec.n_ff = 128;
  spec.n_vocab = 512;
  spec.n_ctx = 2048;
  spec.tool_call_member_order = order;
  const std::string path = testing::TempDir() + "/order-" + tag + "-" + std::to_string(getpid()) + ".gguf";
  EXPECT_TRUE(write_random_model(spec, path).ok());
  return path;
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

TEST(MemberOrder, MentionOrderLaysTheCallOutAsTheRequestNamesItsParameters) {
  const std::string path = write_model("mention", "mention");
  auto e = Engine::open({path, 1, {}});
  std::remove(path.c_str());
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ((*e)->model().config().tool_call_member_order, "mention");
  auto r = (*e)->tool_call(request());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->is_call);
  EXPECT_EQ(keys_of(r->arguments_json), (std::vector<std::string>{"beta", "gamma", "alpha", "delta"}));
  EXPECT_EQ(r->arguments.find("{\"beta\": "), 0u) << r->arguments;
  // The prompt lists the schema in its own order.
  EXPECT_NE(r->prompt_text.find("\"alpha\": {\"type\": \"boolean\"}, \"beta\""), std::string::npos) << r->prompt_text;
}

TEST(MemberOrder, WithoutTheKeyOrWithSchemaTheSchemasOrder) {
  for (const std::string order : {"", "schema"}) {
    const std::string path = write_model(order, "schema" + order);
    auto e = Engine::open({path, 1, {}});
    std::remove(path.c_str());
    ASSERT_TRUE(e.ok()) << e.status().message();
    EXPECT_EQ((*e)->model().config().tool_call_member_order, "");
    auto r = (*e)->tool_call(request());
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_TRUE(r->is_call);
    EXPECT_EQ(keys_of(r->arguments_json), (std::vector<std::string>{"alpha", "beta", "gamma", "delta"}));
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
