// The model's default string slot width (GGUF key dloop.tool_call.string_slot_tokens): read at
// load, range-checked, used by tool calls whose request leaves string_slot_tokens at 0, reported
// in the result; an explicit request value wins; 24 without the key.
#include <gtest/gtest.h>

#include <cstdio>

#include "dloop/engine/engine.h"
#include "dloop/engine/random_model.h"
#include "dloop/engine/tool_call.h"
#include "small_model.h"

namespace dloop::engine {
namespace {

std::string write_model(int64_t slot, const std::string& tag) {
  RandomModelSpec spec = small_model_spec(512);
  spec.tool_call_string_slot = slot;
  return write_small_model(spec, "slot-" + tag);
}

ToolCallRequest request(int64_t slot) {
  ToolCallRequest r;
  r.messages = {{"user", "name it"}};
  r.tools = {{"set_name", "Set the name.",
              *base::Json::parse(R"({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})")}};
  r.tool_choice = ToolChoice{ToolChoice::Kind::kRequired, ""};
  r.answer_length = 32;
  r.string_slot_tokens = slot;
  return r;
}

TEST(StringSlot, TheModelsDefaultAppliesUnlessTheRequestSetsOne) {
  const std::string path = write_model(10, "ten");
  auto e = Engine::open({path, 1, {}});
  std::remove(path.c_str());
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ((*e)->model().config().tool_call_string_slot, 10);
  EXPECT_EQ(string_slot_tokens(request(0), (*e)->model().config()), 10);
  EXPECT_EQ(string_slot_tokens(request(6), (*e)->model().config()), 6);
  auto r = (*e)->tool_call(request(0));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->string_slot_tokens, 10);
  EXPECT_TRUE(r->is_call);
  auto explicit_width = (*e)->tool_call(request(6));
  ASSERT_TRUE(explicit_width.ok()) << explicit_width.status().message();
  EXPECT_EQ(explicit_width->string_slot_tokens, 6);
}

TEST(StringSlot, WithoutTheKeyTheWidthIs24) {
  const std::string path = write_model(0, "none");
  auto e = Engine::open({path, 1, {}});
  std::remove(path.c_str());
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ((*e)->model().config().tool_call_string_slot, 0);
  EXPECT_EQ(string_slot_tokens(request(0), (*e)->model().config()), 24);
}

TEST(StringSlot, BadValuesAreErrors) {
  const std::string path = write_model(1, "bad");
  auto e = Engine::open({path, 1, {}});
  std::remove(path.c_str());
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("dloop.tool_call.string_slot_tokens must be an integer in [2, 1024]"),
            std::string::npos)
      << e.status().message();
  EXPECT_FALSE(validate_tool_call_request(request(1)).ok());
  EXPECT_FALSE(validate_tool_call_request(request(-3)).ok());
  EXPECT_TRUE(validate_tool_call_request(request(0)).ok());
}

}  // namespace
}  // namespace dloop::engine
