// `dloop generate --tool-call` on the bundled model: a call to a tool the model never saw in
// training (reserve_kayak: the verb, the noun and both parameter names are outside its training split),
// decoded by schema-guided infilling, its JSON report, and the usage errors of the flags.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "../common/run_command.h"
#include "dloop/base/json.h"

namespace {

using dloop::base::Json;

dloop::test::Outcome dloop_cmd(const std::string& args) {
  return dloop::test::run_command(std::string(DLOOP_BINARY) + " " + args);
}

// The tools as a file (--tools @FILE), so no shell quoting is involved.
std::string tools_file(const std::string& name, const std::string& json) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << json;
  return path;
}

const char* kKayak = R"([{"name": "reserve_kayak", "description": "Reserve a kayak.",
  "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "people": {"type": "integer"}},
                 "required": ["city", "people"]}}])";

TEST(GenerateToolCall, CallsAToolItNeverSawWithTheRequestsValues) {
  const std::string tools = tools_file("kayak.json", kKayak);
  auto o = dloop_cmd("generate --threads 1 --tool-call --tools @" + tools +
                     " --prompt 'Please reserve a kayak in Lisbon for 3 people.'");
  ASSERT_EQ(o.code, 0) << o.err;
  auto call = Json::parse(o.out);
  ASSERT_TRUE(call.ok()) << o.out;
  EXPECT_EQ(*call, *Json::parse(R"({"name": "reserve_kayak", "arguments": {"city": "Lisbon", "people": 3}})"))
      << o.out;
}

TEST(GenerateToolCall, JsonReportAndEfforts) {
  const std::string tools = tools_file("kayak2.json", kKayak);
  for (const char* effort : {"instant", "high"}) {
    auto o = dloop_cmd("generate --threads 1 --tool-call --json --reasoning " + std::string(effort) + " --tools @" +
                       tools + " --prompt 'Please reserve a kayak in Lisbon for 3 people.'");
    ASSERT_EQ(o.code, 0) << o.err;
    auto j = Json::parse(o.out);
    ASSERT_TRUE(j.ok()) << o.out;
    EXPECT_EQ(j->find("reasoning")->as_string(), effort);
    EXPECT_TRUE(j->find("is_call")->as_bool());
    EXPECT_EQ(j->find("tool_call")->find("name")->as_string(), "reserve_kayak");
    EXPECT_TRUE(j->find("answer")->is_null());
    EXPECT_GT(j->find("forward_passes")->as_int(), 0);
    EXPECT_GT(j->find("prompt_tokens")->as_int(), 20);
    EXPECT_EQ(j->find("string_slot_tokens")->as_int(), 24);
    EXPECT_GT(j->find("call_probability")->as_double(), 0.5);
  }
  // --ground: the same call, and the report says so.
  auto grounded = dloop_cmd("generate --threads 1 --tool-call --json --ground --tools @" + tools +
                            " --prompt 'Please reserve a kayak in Lisbon for 3 people.'");
  ASSERT_EQ(grounded.code, 0) << grounded.err;
  auto g = Json::parse(grounded.out);
  ASSERT_TRUE(g.ok()) << grounded.out;
  EXPECT_TRUE(g->find("ground_values")->as_bool());
  EXPECT_EQ(*g->find("tool_call"), *Json::parse(R"({"name": "reserve_kayak", "arguments": {"city": "Lisbon", "people": 3}})"));
  // tool_choice none: an answer, not a call.
  auto none = dloop_cmd("generate --threads 1 --tool-call --json --tool-choice none --tools @" + tools +
                        " --prompt 'Please reserve a kayak in Lisbon for 3 people.'");
  ASSERT_EQ(none.code, 0) << none.err;
  auto j = Json::parse(none.out);
  ASSERT_TRUE(j.ok()) << none.out;
  EXPECT_FALSE(j->find("is_call")->as_bool());
  EXPECT_TRUE(j->find("tool_call")->is_null());
  EXPECT_TRUE(j->find("answer")->is_string());
}

TEST(GenerateToolCall, UsageErrors) {
  auto no_tools = dloop_cmd("generate --tool-call --prompt hi");
  EXPECT_EQ(no_tools.code, 2);
  EXPECT_NE(no_tools.err.find("--tool-call needs --tools"), std::string::npos) << no_tools.err;
  auto stray = dloop_cmd("generate --reasoning high --prompt hi");
  EXPECT_EQ(stray.code, 2);
  EXPECT_NE(stray.err.find("--reasoning needs --tool-call"), std::string::npos) << stray.err;
  auto stray_ground = dloop_cmd("generate --ground --prompt hi");
  EXPECT_EQ(stray_ground.code, 2);
  EXPECT_NE(stray_ground.err.find("--ground needs --tool-call"), std::string::npos) << stray_ground.err;
  const std::string tools = tools_file("kayak3.json", kKayak);
  auto effort = dloop_cmd("generate --tool-call --reasoning extreme --tools @" + tools + " --prompt hi");
  EXPECT_EQ(effort.code, 2);
  EXPECT_NE(effort.err.find("--reasoning: expected instant, low, medium or high, not 'extreme'"), std::string::npos)
      << effort.err;
  auto unknown = dloop_cmd("generate --tool-call --tool-choice book_kayak --tools @" + tools + " --prompt hi");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("book_kayak"), std::string::npos) << unknown.err;
  const std::string bad = tools_file("bad.json", R"([{"name": "x", "parameters": {"type": "object",
      "properties": {"a": {"type": "string", "format": "date"}}}}])");
  auto schema = dloop_cmd("generate --tool-call --tools @" + bad + " --prompt hi");
  EXPECT_EQ(schema.code, 2);
  EXPECT_NE(schema.err.find("tools[0] 'x': #/properties/a: unsupported keyword 'format'"), std::string::npos)
      << schema.err;
  const std::string params = tools_file("params.json", R"([{"name": "x", "parameters": [1]}])");
  auto not_object = dloop_cmd("generate --tool-call --tools @" + params + " --prompt hi");
  EXPECT_EQ(not_object.code, 2);
  EXPECT_NE(not_object.err.find("--tools: item 0: \"parameters\" must be a JSON Schema object"), std::string::npos)
      << not_object.err;
}

}  // namespace
