// Binding a run's inputs: defaults, required inputs, unknown names, types, enums, and the
// conversion of command-line text.
#include <gtest/gtest.h>

#include "dloop/workflows/load.h"

namespace dloop::workflows {
namespace {

using base::Json;

Workflow workflow() {
  auto w = load_string(R"(name: inputs
inputs:
  ticket: {type: string, required: true}
  priority: {type: integer, default: 3, enum: [1, 2, 3]}
  ratio: {type: number}
  dry_run: {type: boolean, default: false}
  tags: {type: array, default: []}
  meta: {type: object}
steps: [{id: a, set: {x: 1}}]
)",
                       "inputs.yaml");
  EXPECT_TRUE(w.ok()) << w.status().to_string();
  return *w;
}

TEST(Inputs, DefaultsAndOrder) {
  auto r = resolve_inputs(workflow(), Json::object({{"ticket", "hi"}}));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->dump(), R"({"ticket":"hi","priority":3,"ratio":null,"dry_run":false,"tags":[],"meta":null})");
}

TEST(Inputs, Errors) {
  Workflow w = workflow();
  EXPECT_EQ(resolve_inputs(w, Json::object()).status().message(), "missing required input 'ticket'");
  EXPECT_EQ(resolve_inputs(w, Json::object({{"ticket", "x"}, {"priorty", 1}})).status().message(),
            "unknown input 'priorty' (did you mean 'priority'?)");
  EXPECT_EQ(resolve_inputs(w, Json::object({{"ticket", 5}})).status().message(),
            "input 'ticket' must be a string, got a number");
  EXPECT_EQ(resolve_inputs(w, Json::object({{"ticket", "x"}, {"priority", 7}})).status().message(),
            "input 'priority' must be one of 1, 2, 3, got 7");
  EXPECT_EQ(resolve_inputs(w, Json::array()).status().message(), "inputs must be a JSON object");
  auto ok = resolve_inputs(w, Json::object({{"ticket", "x"}, {"ratio", 2}, {"priority", 2.0}}));
  EXPECT_TRUE(ok.ok()) << ok.status().to_string();  // 2 is a number; 2.0 is an integer
}

TEST(Inputs, ParseText) {
  Workflow w = workflow();
  EXPECT_EQ(*parse_input_text(*w.find_input("ticket"), "a b"), Json("a b"));
  EXPECT_EQ(*parse_input_text(*w.find_input("priority"), "2"), Json(2));
  EXPECT_EQ(parse_input_text(*w.find_input("priority"), "2x").status().message(), "input 'priority' must be an integer, got '2x'");
  EXPECT_EQ(*parse_input_text(*w.find_input("ratio"), "0.5"), Json(0.5));
  EXPECT_FALSE(parse_input_text(*w.find_input("ratio"), "half").ok());
  EXPECT_EQ(*parse_input_text(*w.find_input("dry_run"), "true"), Json(true));
  EXPECT_EQ(parse_input_text(*w.find_input("dry_run"), "yes").status().message(),
            "input 'dry_run' must be true or false, got 'yes'");
  EXPECT_EQ(*parse_input_text(*w.find_input("tags"), "[1, \"a\"]"), Json::array({1, "a"}));
  EXPECT_EQ(parse_input_text(*w.find_input("tags"), "{}").status().message(), "input 'tags' must be a list");
  EXPECT_EQ(*parse_input_text(*w.find_input("meta"), "{\"k\": 1}"), Json::object({{"k", 1}}));
}

}  // namespace
}  // namespace dloop::workflows
