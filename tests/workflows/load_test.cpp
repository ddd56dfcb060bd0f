// Loading valid workflow files: every construct lands in the data model with its location, and
// templated values evaluate against a context.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "dloop/workflows/load.h"

namespace dloop::workflows {
namespace {

using base::Json;

std::string data_path(const std::string& name) { return std::string(DLOOP_SOURCE_DIR) + "/tests/workflows/data/" + name; }

Workflow load_ok(const std::string& name) {
  auto r = load_file(data_path(name));
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : Workflow();
}

Workflow load_text(const std::string& text) {
  auto r = load_string(text, "flow.yaml");
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : Workflow();
}

TEST(Load, TriageTopLevelInputsAndTools) {
  Workflow w = load_ok("triage.yaml");
  EXPECT_EQ(w.name, "ticket-triage");
  EXPECT_EQ(w.description, "Classify a support ticket and file billing tickets.");
  EXPECT_EQ(w.model, "default");
  EXPECT_EQ(w.source, data_path("triage.yaml"));
  ASSERT_EQ(w.inputs.size(), 2u);
  EXPECT_EQ(w.inputs[0].name, "ticket");
  EXPECT_EQ(w.inputs[0].type, InputType::kString);
  EXPECT_TRUE(w.inputs[0].required);
  EXPECT_EQ(w.inputs[0].description, "The ticket text");
  EXPECT_EQ(w.inputs[0].location.line, 6);
  EXPECT_EQ(w.inputs[0].location.column, 3);
  EXPECT_EQ(w.inputs[1].type, InputType::kInteger);
  EXPECT_EQ(*w.inputs[1].default_value, Json(3));
  EXPECT_EQ(w.inputs[1].enum_values.size(), 3u);

  ASSERT_EQ(w.tools.size(), 4u);
  EXPECT_TRUE(w.tools[0].is_builtin());
  EXPECT_EQ(w.tools[0].name, "sqlite_query");
  const auto& with = std::get<BuiltinTool>(w.tools[0].spec).with;
  EXPECT_EQ(with.kind, Value::Kind::kLiteral);
  EXPECT_EQ(with.literal, Json::object({{"database", "customers.db"}, {"readonly", true}}));
  EXPECT_EQ(w.tools[0].location.line, 9);
  EXPECT_EQ(w.tools[1].name, "file_write");
  EXPECT_TRUE(w.tools[2].is_command());
  const auto& cmd = std::get<CommandTool>(w.tools[2].spec);
  EXPECT_EQ(cmd.command.literal, Json::array({"./lookup_order.sh"}));
  EXPECT_EQ(cmd.parameters.find("required")->dump(), "[\"order_id\"]");
  EXPECT_EQ(*cmd.timeout_ms, 5000);
  EXPECT_TRUE(w.tools[3].is_mcp());
  const auto& mcp = std::get<McpServer>(w.tools[3].spec);
  EXPECT_EQ(mcp.command, "npx");
  EXPECT_EQ(mcp.args.literal, Json::array({"-y", "@modelcontextprotocol/server-filesystem", "./docs"}));
  EXPECT_EQ(mcp.prefix, "fs_");
  EXPECT_EQ(w.find_tool("lookup_order"), &w.tools[2]);
  EXPECT_EQ(w.find_tool("fs_read_file"), nullptr);
}

TEST(Load, TriageSteps) {
  Workflow w = load_ok("triage.yaml");
  ASSERT_EQ(w.steps.size(), 2u);
  const Step& classify = w.steps[0];
  EXPECT_EQ(classify.id, "classify");
  EXPECT_EQ(classify.location.line, 19);
  EXPECT_EQ(classify.location.column, 5);
  EXPECT_STREQ(step_kind_name(classify.kind), "agent");
  const auto& agent = std::get<AgentStep>(classify.kind);
  EXPECT_TRUE(agent.prompt.tmpl.has_expressions());
  EXPECT_EQ(agent.system->tmpl.text(), "You sort support tickets.");
  EXPECT_EQ(*agent.tools, (std::vector<std::string>{"sqlite_query", "lookup_order", "fs_read_file"}));
  EXPECT_EQ(agent.tool_choice, "auto");
  EXPECT_EQ(agent.max_turns, 4);
  EXPECT_EQ(agent.reasoning, "low");
  ASSERT_TRUE(agent.output_schema);
  EXPECT_EQ(agent.output_schema->find("additionalProperties")->as_bool(), false);

  const Step& save = w.steps[1];
  EXPECT_STREQ(step_kind_name(save.kind), "tool");
  ASSERT_TRUE(save.condition);
  EXPECT_TRUE(save.condition->single_expression());
  EXPECT_EQ(*save.timeout_ms, 10000);
  EXPECT_TRUE(save.continue_on_error);
  ASSERT_TRUE(save.retry);
  EXPECT_EQ(save.retry->max_attempts, 3);
  EXPECT_EQ(save.retry->backoff_ms, 1000);
  EXPECT_EQ(save.retry->multiplier, 2.0);
  EXPECT_EQ(save.retry->on, (std::vector<ErrorKind>{ErrorKind::kTimeout, ErrorKind::kToolError}));
  const auto& tool = std::get<ToolStep>(save.kind);
  EXPECT_EQ(tool.tool, "file_write");
  EXPECT_EQ(tool.args.kind, Value::Kind::kObject);
  ASSERT_EQ(w.outputs.size(), 2u);
  EXPECT_EQ(w.outputs[1].first, "saved");
}

TEST(Load, TriageValuesEvaluate) {
  Workflow w = load_ok("triage.yaml");
  EvalContext c;
  c.set("inputs", Json::object({{"ticket", "refund"}, {"priority", 3}}));
  c.set("run", Json::object({{"id", "r42"}, {"workflow", "ticket-triage"}}));
  Json steps = Json::object();
  steps.set("classify", Json::object({{"output", Json::object({{"category", "billing"}})}, {"status", "succeeded"}}));
  steps.set("save", Json::object({{"output", Json()}, {"status", "succeeded"}}));
  c.set("steps", steps);
  const Step& save = w.steps[1];
  EXPECT_EQ(*render(*save.condition, c), Json(true));
  auto args = evaluate_value(std::get<ToolStep>(save.kind).args, c);
  ASSERT_TRUE(args.ok()) << args.status().to_string();
  EXPECT_EQ(*args, Json::object({{"path", "billing/r42.txt"}, {"content", "billing"}}));
  EXPECT_EQ(*render(std::get<AgentStep>(w.steps[0].kind).prompt.tmpl, c), Json("Ticket: refund"));
  EXPECT_EQ(*evaluate_value(w.outputs[1].second, c), Json(true));
}

TEST(Load, EvaluationErrorsCarryTheLocation) {
  Workflow w = load_ok("triage.yaml");
  EvalContext c;
  c.set("run", Json::object({{"id", "r1"}}));
  c.set("steps", Json::object());
  auto args = evaluate_value(std::get<ToolStep>(w.steps[1].kind).args, c);
  ASSERT_FALSE(args.ok());
  EXPECT_EQ(args.status().message(),
            "30:56: ${{ steps.classify.output.category }}: steps has no key 'classify'");
}

TEST(Load, LoopsEveryControlFlowKind) {
  Workflow w = load_ok("loops.yaml");
  ASSERT_EQ(w.steps.size(), 5u);
  const auto& each = std::get<ForEachStep>(w.steps[0].kind);
  EXPECT_EQ(each.items.kind, Value::Kind::kTemplate);
  EXPECT_EQ(each.as, "file");
  EXPECT_EQ(each.max_parallel, 2);
  ASSERT_EQ(each.steps.size(), 2u);
  EXPECT_EQ(each.steps[1].id, "note");
  const auto& refine = std::get<RepeatUntilStep>(w.steps[1].kind);
  EXPECT_EQ(refine.max_iterations, 5);
  EXPECT_TRUE(refine.until.single_expression());
  ASSERT_EQ(refine.steps.size(), 1u);
  const auto& both = std::get<ParallelStep>(w.steps[2].kind);
  ASSERT_EQ(both.branches.size(), 2u);
  EXPECT_EQ(*both.branches[1].timeout_ms, 120000);
  const Step& check = w.steps[3];
  ASSERT_TRUE(check.condition);
  EXPECT_EQ(check.condition->text(), "length(steps.each.output) > 1 and not contains(inputs.files, 'skip.txt')");
  const auto& branch = std::get<IfStep>(check.kind);
  EXPECT_EQ(branch.then_steps[0].id, "many");
  EXPECT_EQ(branch.else_steps[0].id, "few");
  const auto& done = std::get<SetStep>(w.steps[4].kind);
  ASSERT_EQ(done.values.size(), 2u);
  EXPECT_EQ(done.values[0].first, "summary");
  EXPECT_EQ(w.find_step("score")->id, "score");
  EXPECT_EQ(w.find_step("right")->id, "right");
  EXPECT_EQ(w.find_step("few")->id, "few");
  EXPECT_EQ(w.find_step("nope"), nullptr);
  EXPECT_EQ(child_steps(check).size(), 2u);
}

TEST(Load, LoopsValuesEvaluate) {
  Workflow w = load_ok("loops.yaml");
  EvalContext c;
  c.set("inputs", Json::object({{"files", Json::array({"a.txt", "b.txt"})}, {"limit", 0.5}}));
  c.set("steps", Json::object({{"score", Json::object({{"output", Json::object({{"value", 0.4}})}})}}));
  c.set("index", Json(2));
  EXPECT_EQ(*render(std::get<RepeatUntilStep>(w.steps[1].kind).until, c), Json(true));
  c.set("index", Json(0));
  EXPECT_EQ(*render(std::get<RepeatUntilStep>(w.steps[1].kind).until, c), Json(false));
  EXPECT_EQ(*evaluate_value(std::get<ForEachStep>(w.steps[0].kind).items, c), Json::array({"a.txt", "b.txt"}));
  const auto& done = std::get<SetStep>(w.steps[4].kind);
  EXPECT_EQ(*evaluate_value(done.values[0].second, c), Json("2 files, first a.txt"));
  EXPECT_EQ(*evaluate_value(done.values[1].second, c), Json(0));
}

TEST(Load, MinimalDefaults) {
  Workflow w = load_ok("minimal.yaml");
  EXPECT_EQ(w.model, "default");
  EXPECT_EQ(w.device, "cpu");
  ASSERT_EQ(w.steps.size(), 1u);
  const auto& a = std::get<AgentStep>(w.steps[0].kind);
  EXPECT_FALSE(a.tools.has_value());  // every declared tool
  EXPECT_EQ(a.max_turns, 8);
  EXPECT_EQ(a.reasoning, "");
  EXPECT_FALSE(a.output_schema);
  EXPECT_FALSE(w.steps[0].retry);
  EXPECT_FALSE(w.steps[0].timeout_ms);
  EXPECT_FALSE(w.steps[0].continue_on_error);
}

TEST(Load, ScalarsResolveLikeYaml12) {
  Workflow w = load_text(R"(name: scalars
steps:
  - id: s
    set:
      i: 12
      neg: -3
      f: 1.5
      e: 1e3
      t: true
      n: ~
      empty:
      q: "12"
      yes_is_text: yes
      multi: |
        line one
        line two
)");
  const auto& s = std::get<SetStep>(w.steps[0].kind);
  Json expected = Json::object({{"i", 12}, {"neg", -3}, {"f", 1.5}, {"e", 1000.0}, {"t", true}, {"n", Json()},
                                {"empty", Json()}, {"q", "12"}, {"yes_is_text", "yes"},
                                {"multi", "line one\nline two\n"}});
  Json got = Json::object();
  for (const auto& [k, v] : s.values) got.set(k, v.literal);
  EXPECT_EQ(got, expected);
}

TEST(Load, RetryDefaultsAndConditionForms) {
  Workflow w = load_text(R"(name: r
tools: [{use: echo}]
steps:
  - id: a
    if: true
    tool: echo
    retry: {}
  - id: b
    if: "${{ steps.a.status == 'failed' }}"
    tool: echo
    retry: {max_attempts: 5, backoff: 250ms, multiplier: 1.5, on: [any]}
  - id: c
    if: steps.a.status != 'skipped'
    tool: echo
    args: ${{ steps.a.output }}
)");
  ASSERT_EQ(w.steps.size(), 3u);
  EXPECT_EQ(w.steps[0].retry->max_attempts, 3);
  EXPECT_EQ(w.steps[0].retry->on, std::vector<ErrorKind>{ErrorKind::kAny});
  EXPECT_EQ(*render(*w.steps[0].condition, EvalContext()), Json(true));
  EXPECT_EQ(w.steps[1].retry->backoff_ms, 250);
  EXPECT_EQ(w.steps[1].retry->multiplier, 1.5);
  EXPECT_EQ(w.steps[2].condition->text(), "steps.a.status != 'skipped'");
  EXPECT_EQ(std::get<ToolStep>(w.steps[2].kind).args.kind, Value::Kind::kTemplate);
}

TEST(Load, McpWithoutPrefixAcceptsAnyToolName) {
  Workflow w = load_text(R"(name: m
tools:
  - mcp: {url: "http://127.0.0.1:9000/mcp"}
steps:
  - id: a
    tool: anything_the_server_has
  - id: b
    agent: {prompt: hi, tools: [read_file], tool_choice: read_file}
)");
  EXPECT_EQ(std::get<McpServer>(w.tools[0].spec).url, "http://127.0.0.1:9000/mcp");
}

TEST(Load, TheDocumentedExampleIsValid) {
  std::ifstream in(std::string(DLOOP_SOURCE_DIR) + "/docs/workflows.md");
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  const size_t begin = text.find("```yaml\n");
  ASSERT_NE(begin, std::string::npos);
  const size_t end = text.find("```\n", begin + 8);
  ASSERT_NE(end, std::string::npos);
  auto diags = validate(text.substr(begin + 8, end - begin - 8), "workflows.md");
  for (const auto& d : diags) ADD_FAILURE() << d.to_string();
}

TEST(Load, NamesForEnums) {
  EXPECT_STREQ(error_kind_name(ErrorKind::kInvalidOutput), "invalid_output");
  EXPECT_EQ(parse_error_kind("tool_error"), ErrorKind::kToolError);
  EXPECT_FALSE(parse_error_kind("nope"));
  EXPECT_STREQ(input_type_name(InputType::kBoolean), "boolean");
}

TEST(Load, LoadFileErrors) {
  auto missing = load_file(data_path("does-not-exist.yaml"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), base::Code::kNotFound);
  auto bad = load_file(data_path("invalid/many_errors.yaml"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), base::Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("many_errors.yaml:2:1: error: unknown key 'stpes' in workflow (did you mean "
                                        "'steps'?) (and 12 more problems)"),
            std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace dloop::workflows
