// Validation: every kind of problem is reported with its exact line:column and message, and all
// problems of a file come back from one pass, sorted by position.
#include <gtest/gtest.h>

#include <algorithm>

#include "dloop/workflows/load.h"

namespace dloop::workflows {
namespace {

std::vector<std::string> problems(const std::string& text, const LoadOptions& options = {}) {
  std::vector<std::string> out;
  for (const auto& d : validate(text, "flow.yaml", options)) {
    out.push_back(std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.message);
  }
  return out;
}

// A workflow with one problem: exactly that diagnostic.
void expect_one(const std::string& text, const std::string& expected, const LoadOptions& options = {}) {
  auto got = problems(text, options);
  ASSERT_EQ(got.size(), 1u) << text << "\n" << ::testing::PrintToString(got);
  EXPECT_EQ(got[0], expected) << text;
}

const char* kTools = R"(name: t
tools:
  - use: file_write
  - name: lookup
    command: [./lookup.sh]
    parameters: {type: object, properties: {id: {type: string}, verbose: {type: boolean}}, required: [id], additionalProperties: false}
  - mcp: {command: srv}
    prefix: fs_
steps:
)";

TEST(Errors, YamlSyntax) {
  expect_one("name: t\nsteps: [\n", "3:1: YAML syntax error: end of sequence flow not found");
  expect_one("name: t\n  bad: indent\n", "2:6: YAML syntax error: illegal map value");
  expect_one("name: t\n- x\n", "2:1: YAML syntax error: end of map not found");
  expect_one("name: t\nsteps:\n  - id: a\n\tset: 1\n", "4:1: YAML syntax error: illegal tab when looking for indentation");
}

TEST(Errors, DocumentShape) {
  expect_one("", "1:1: the file is empty: a workflow is a mapping with at least 'name' and 'steps'");
  expect_one("- a\n- b\n", "1:1: a workflow file must be a mapping (name, steps, ...), got a list");
  expect_one("name: t\nsteps: [{id: a, set: {x: 1}}]\n---\nname: u\n",
             "3:1: a workflow file holds one YAML document; a second one starts here");
  expect_one("name: t\nname: u\nsteps: [{id: a, set: {x: 1}}]\n", "2:1: duplicate key 'name' (first at line 1)");
  EXPECT_EQ(problems("name: t\nsteps: [{id: a, set: {[1]: 1}}]\n"),
            (std::vector<std::string>{"2:22: 'set' must name at least one value",
                                      "2:23: a mapping key must be a plain string, not a list"}));
  expect_one("name: !custom t\nsteps: [{id: a, set: {x: 1}}]\n", "1:7: unsupported YAML tag '!custom' (tags are not used in workflow files)");
}

TEST(Errors, DeviceIsCpuOrCuda) {
  expect_one("name: t\ndevice: gpu\nsteps: [{id: a, set: {x: 1}}]\n", "2:9: 'device' must be cpu or cuda, got 'gpu'");
  expect_one("name: t\ndevice: [cuda]\nsteps: [{id: a, set: {x: 1}}]\n", "2:9: 'device' must be a string, got a list");
  EXPECT_TRUE(problems("name: t\ndevice: cuda\nsteps: [{id: a, set: {x: 1}}]\n").empty());
}

TEST(Errors, HostileYamlIsAnErrorNotACrash) {
  auto cycle = problems("name: t\nsteps: &a [*a]\n");
  ASSERT_FALSE(cycle.empty());
  EXPECT_NE(cycle[0].find("nesting is deeper than 64 levels (or an alias refers to itself)"), std::string::npos)
      << cycle[0];
  std::string deep = "name: t\nsteps: " + std::string(100, '[') + std::string(100, ']') + "\n";
  auto d = problems(deep);
  EXPECT_NE(std::find(d.begin(), d.end(), "2:72: nesting is deeper than 64 levels (or an alias refers to itself)"),
            d.end())
      << ::testing::PrintToString(d);
  std::string bomb = "name: t\na: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'h'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [*" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" +
            char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) +
            ", *" + char(c - 1) + ", *" + char(c - 1) + "]\n";
  }
  auto b = problems(bomb);
  EXPECT_NE(std::find(b.begin(), b.end(), "2:8: the document has more than 200000 nodes once aliases are expanded"),
            b.end())
      << ::testing::PrintToString(b);
  std::string huge(kMaxFileBytes + 1, '#');
  auto h = validate(huge, "big.yaml");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].to_string(), "big.yaml: error: the file is larger than 4 MiB");
}

TEST(Errors, UnknownKeysSuggest) {
  expect_one("name: t\nstpes: []\nsteps: [{id: a, set: {x: 1}}]\n",
             "2:1: unknown key 'stpes' in workflow (did you mean 'steps'?)");
  expect_one("name: t\nsteps:\n  - id: a\n    agent: {promt: hi, prompt: hi}\n",
             "4:13: unknown key 'promt' in agent step 'a' (did you mean 'prompt'?)");
  expect_one("name: t\nsteps:\n  - id: a\n    set: {x: 1}\n    timout: 1s\n",
             "5:5: unknown key 'timout' in step 'a' (did you mean 'timeout'?)");
  expect_one("name: t\nsteps:\n  - id: a\n    set: {x: 1}\n    retry: {max_attempt: 2}\n",
             "5:13: unknown key 'max_attempt' in retry (did you mean 'max_attempts'?)");
  expect_one("name: t\ninputs: {x: {type: string, requird: true}}\nsteps: [{id: a, set: {x: 1}}]\n",
             "2:28: unknown key 'requird' in input 'x' (did you mean 'required'?)");
  expect_one("name: t\nzzz: 1\nsteps: [{id: a, set: {x: 1}}]\n", "2:1: unknown key 'zzz' in workflow");
}

TEST(Errors, WrongTypes) {
  expect_one("name: [t]\nsteps: [{id: a, set: {x: 1}}]\n", "1:7: 'name' must be a string, got a list");
  expect_one("name: t\nsteps:\n  - id: a\n    agent: {prompt: hi, max_turns: four}\n",
             "4:36: 'max_turns' must be an integer, got a string 'four'");
  expect_one("name: t\nsteps:\n  - id: a\n    agent: {prompt: hi, max_turns: 0}\n",
             "4:36: 'max_turns' must be between 1 and 1000, got 0");
  expect_one("name: t\nsteps:\n  - id: a\n    set: {x: 1}\n    continue_on_error: yes\n",
             "5:24: 'continue_on_error' must be true or false, got a string 'yes'");
  expect_one("name: t\nsteps: {id: a}\n", "2:8: 'steps' must be a list, got a mapping");
  expect_one("name: t\nsteps:\n  - id: a\n    agent: {prompt: 42}\n", "4:21: 'prompt' must be a string, got a number '42'");
  expect_one("name: t\nsteps:\n  - id: a\n    agent: hi\n", "4:12: 'agent' must be a mapping, got a string 'hi'");
  expect_one("name: t\nsteps:\n  - id: a\n    set: {x: 1}\n    retry: {multiplier: 0.5}\n",
             "5:25: 'multiplier' must be at least 1, got 0.5");
}

TEST(Errors, MissingRequiredKeys) {
  expect_one("steps: [{id: a, set: {x: 1}}]\n", "1:1: missing required key 'name' in workflow");
  expect_one("name: t\n", "1:1: missing required key 'steps' in workflow");
  expect_one("name: t\nsteps: []\n", "2:8: 'steps' must list at least one step");
  expect_one("name: t\nsteps:\n  - set: {x: 1}\n", "3:5: missing required key 'id' in step");
  expect_one("name: t\nsteps:\n  - id: a\n    agent: {system: s}\n", "4:12: missing required key 'prompt' in agent step 'a'");
  expect_one("name: t\nsteps:\n  - id: a\n    description: nothing\n",
             "3:5: step 'a' needs one of: agent, tool, then (with if), for_each, repeat_until, parallel, set");
  expect_one("name: t\nsteps:\n  - id: a\n    repeat_until: true\n    steps: [{id: b, set: {x: 1}}]\n",
             "3:5: missing required key 'max_iterations' in repeat_until step 'a' (a hard cap on the number of iterations)");
  expect_one("name: t\nsteps:\n  - id: a\n    for_each: [1, 2]\n", "3:5: missing required key 'steps' in for_each step 'a'");
}

TEST(Errors, DuplicateIdsAndNames) {
  expect_one("name: t\nsteps:\n  - id: a\n    set: {x: 1}\n  - id: b\n    for_each: [1]\n    steps:\n      - id: a\n        set: {y: 1}\n",
             "8:13: duplicate step id 'a' (first at line 3)");
  expect_one("name: t\ntools:\n  - use: echo\n  - use: echo\nsteps: [{id: a, set: {x: 1}}]\n",
             "4:5: duplicate tool name 'echo' (first declared at line 3)");
  expect_one("name: t\nsteps:\n  - id: 1st\n    set: {x: 1}\n",
             "3:9: step id '1st' must start with a letter or '_' and hold only letters, digits, '_' and '-' (at most 64)");
}

TEST(Errors, StepKinds) {
  expect_one("name: t\ntools: [{use: echo}]\nsteps:\n  - id: a\n    agent: {prompt: hi}\n    tool: echo\n",
             "6:11: step 'a' has both 'agent' and 'tool'; a step does one thing");
  expect_one("name: t\nsteps:\n  - id: a\n    agent: {prompt: hi}\n    args: {x: 1}\n", "5:5: 'args' only applies to tool steps");
  expect_one("name: t\nsteps:\n  - id: a\n    then: [{id: b, set: {x: 1}}]\n", "4:11: 'then' needs an 'if' condition on the same step");
  expect_one("name: t\nsteps:\n  - id: a\n    if: \"x ${{ true }}\"\n    then: [{id: b, set: {x: 1}}]\n",
             "4:9: 'if' must be one expression such as '${{ a && b }}', not text around '${{ }}'");
  expect_one("name: t\nsteps:\n  - id: a\n    for_each: [1]\n    as: index\n    steps: [{id: b, set: {x: 1}}]\n",
             "5:9: 'as' cannot be 'index': that name is taken");
  expect_one("name: t\nsteps:\n  - id: a\n    for_each: [1]\n    max_parallel: 0\n    steps: [{id: b, set: {x: 1}}]\n",
             "5:19: 'max_parallel' must be between 1 and 1024, got 0");
  expect_one("name: t\nsteps:\n  - id: a\n    parallel: []\n", "4:15: 'parallel' must list at least one step");
  expect_one("name: t\nsteps:\n  - id: a\n    for_each: 3\n    steps: [{id: b, set: {x: 1}}]\n",
             "4:15: 'for_each' must be a list or an expression, got a number '3'");
  expect_one("name: t\ntools: [{use: echo}]\nsteps:\n  - id: a\n    tool: echo\n    args: hello\n",
             "6:11: 'args' must be a mapping or one ${{ }} expression that yields an object, got a string 'hello'");
  expect_one("name: t\nsteps:\n  - id: a\n    set: {}\n", "4:10: 'set' must name at least one value");
  expect_one("name: t\nsteps:\n  - id: a\n    agent: {prompt: hi, reasoning: hihg}\n",
             "4:36: unknown reasoning level 'hihg' (did you mean 'high'?); levels: instant, low, medium, high");
  expect_one("name: t\nsteps:\n  - id: a\n    set: {x: 1}\n    retry: {on: [timeot]}\n",
             "5:18: unknown error kind 'timeot' (did you mean 'timeout'?); kinds: any, timeout, tool_error, model_error, "
             "invalid_output, unavailable");
}

TEST(Errors, Durations) {
  expect_one("name: t\nsteps:\n  - id: a\n    set: {x: 1}\n    timeout: 10 sec\n",
             "5:14: bad duration '10 sec' for 'timeout' (use a number and a unit: 250ms, 10s, 2m, 1h)");
  expect_one("name: t\nsteps:\n  - id: a\n    set: {x: 1}\n    retry: {backoff: soon}\n",
             "5:22: bad duration 'soon' for 'backoff' (use a number and a unit: 250ms, 10s, 2m, 1h)");
  expect_one("name: t\nsteps:\n  - id: a\n    set: {x: 1}\n    timeout: 0s\n", "5:14: 'timeout' must be more than 0");
  expect_one("name: t\ntools: [{name: x, command: [x], timeout: [1]}]\nsteps: [{id: a, set: {x: 1}}]\n",
             "2:42: 'timeout' must be a duration such as 10s, got a list");
}

TEST(Errors, StepReferences) {
  // Unknown, later, itself, inside a loop, a parallel sibling, the other branch of an if.
  expect_one("name: t\nsteps:\n  - id: classify\n    set: {x: 1}\n  - id: b\n    set: {y: \"${{ steps.clasify.output }}\"}\n",
             "6:25: unknown step 'clasify' (did you mean 'classify'?)");
  expect_one("name: t\nsteps:\n  - id: a\n    if: ${{ steps.b.status == 'ok' }}\n    set: {x: 1}\n  - id: b\n    set: {y: 1}\n",
             "4:19: step 'b' has not run at this point (it comes later, or in another branch)");
  expect_one("name: t\nsteps:\n  - id: a\n    set: {x: \"${{ steps.a.output }}\"}\n",
             "4:25: step 'a' cannot read its own output");
  expect_one("name: t\nsteps:\n  - id: loop\n    for_each: [1]\n    steps:\n      - id: inner\n        set: {x: 1}\n"
             "  - id: after\n    set: {y: \"${{ steps.inner.output }}\"}\n",
             "9:25: step 'inner' is inside the loop 'loop' and cannot be read outside it (read steps.loop.output instead)");
  expect_one("name: t\nsteps:\n  - id: loop\n    for_each: [1]\n    steps:\n      - id: a\n        set: {x: \"${{ steps.b.output }}\"}\n"
             "      - id: b\n        set: {y: 1}\n",
             "7:29: step 'b' has not run at this point (it comes later, or in another branch)");
  expect_one("name: t\nsteps:\n  - id: loop\n    repeat_until: ${{ steps.loop.output }}\n    max_iterations: 2\n"
             "    steps: [{id: a, set: {x: 1}}]\n",
             "4:29: step 'loop' cannot read its own output");
  expect_one("name: t\nsteps:\n  - id: p\n    parallel:\n      - id: l\n        set: {x: 1}\n"
             "      - id: r\n        set: {y: \"${{ steps.l.output }}\"}\n",
             "8:29: step 'l' has not run at this point (it comes later, or in another branch)");
  expect_one("name: t\nsteps:\n  - id: c\n    if: true\n    then: [{id: t1, set: {x: 1}}]\n"
             "    else: [{id: e1, set: {y: \"${{ steps.t1.output }}\"}}]\n",
             "6:41: step 't1' has not run at this point (it comes later, or in another branch)");
  expect_one("name: t\nsteps:\n  - id: a\n    set: {x: 1}\n  - id: b\n    set: {y: \"${{ steps.a.outputs }}\"}\n",
             "6:27: unknown step field 'outputs' (did you mean 'output'?); a step has output, status and error");
  expect_one("name: t\nsteps:\n  - id: a\n    set: {count: 1}\n  - id: b\n    set: {y: \"${{ steps.a.output.cont }}\"}\n",
             "6:34: the output of step 'a' has no key 'cont' (did you mean 'count'?)");
  expect_one("name: t\nsteps:\n  - id: a\n    agent:\n      prompt: hi\n      output_schema: {type: object, properties: "
             "{category: {type: string}}, additionalProperties: false}\n  - id: b\n    set: {y: \"${{ steps.a.output.kind }}\"}\n",
             "8:34: the output of step 'a' has no key 'kind'");
}

TEST(Errors, VisibleStepsAreAccepted) {
  // Inside a loop body, the earlier body steps and the loop variables; `until` sees the body;
  // after an if/parallel, the steps inside it; an enclosing loop's outputs are not readable.
  EXPECT_EQ(problems(R"(name: t
inputs: {xs: {type: array}}
steps:
  - id: first
    set: {v: 1}
  - id: loop
    for_each: ${{ inputs.xs }}
    as: x
    steps:
      - id: a
        set: {v: "${{ x }} ${{ index }} ${{ steps.first.output.v }}"}
      - id: b
        set: {v: "${{ steps.a.output.v }}"}
  - id: again
    repeat_until: ${{ steps.inner.output.done || index > 3 }}
    max_iterations: 4
    steps:
      - id: draft
        set: {notes: "${{ default(steps.inner.output.done, false) }}"}
      - id: inner
        set: {done: true}
  - id: p
    parallel:
      - {id: l, set: {v: 1}}
      - {id: r, set: {v: 2}}
  - id: c
    if: ${{ steps.l.output.v == steps.r.output.v }}
    then: [{id: t1, set: {v: 1}}]
    else: [{id: e1, set: {v: 2}}]
  - id: last
    set: {v: "${{ default(steps.t1.output.v, steps.e1.output.v) }}", loop: "${{ steps.loop.output }}"}
outputs:
  v: ${{ steps.last.output.v }}
  status: ${{ steps.c.status }}
)"),
            std::vector<std::string>{});
}

TEST(Errors, OtherNames) {
  expect_one("name: t\ninputs: {ticket: {type: string}}\nsteps:\n  - id: a\n    agent: {prompt: \"${{ inputs.tiket }}\"}\n",
             "5:33: unknown input 'tiket' (did you mean 'ticket'?)");
  expect_one("name: t\nsteps:\n  - id: a\n    agent: {prompt: \"${{ inputs.x }}\"}\n",
             "4:33: unknown input 'x' (the workflow declares no inputs)");
  expect_one("name: t\nsteps:\n  - id: a\n    agent: {prompt: \"${{ run.idd }}\"}\n",
             "4:30: unknown run field 'idd' (did you mean 'id'?); fields: id, workflow, started_at");
  expect_one("name: t\nsteps:\n  - id: a\n    agent: {prompt: \"${{ env.HOME }}\"}\n",
             "4:26: env is not available: list the variables expressions may read under the top-level 'env:' key");
  expect_one("name: t\nenv: [HOME]\nsteps:\n  - id: a\n    agent: {prompt: \"${{ env.USER }}\"}\n",
             "5:30: environment variable 'USER' is not listed under 'env:'");
  expect_one("name: t\nsteps:\n  - id: a\n    agent: {prompt: \"${{ item }}\"}\n",
             "4:26: unknown name 'item' (loop variables exist only inside for_each and repeat_until steps)");
  expect_one("name: t\nsteps:\n  - id: a\n    agent: {prompt: \"${{ input.x }}\"}\n",
             "4:26: unknown name 'input' (did you mean 'inputs'?)");
  expect_one("name: t\nsteps:\n  - id: a\n    for_each: [1]\n    steps: [{id: b, set: {x: \"${{ index-1 }}\"}}]\n",
             "5:35: unknown name 'index-1' (names may contain '-'; there is no subtraction)");
  expect_one("name: t\ntools: [{use: db, with: {path: \"${{ steps.a.output }}\"}}]\nsteps:\n  - id: a\n    set: {x: 1}\n",
             "2:37: step outputs are not available here (tools and inputs are set up before the first step)");
}

TEST(Errors, BadExpressionsPointIntoTheFile) {
  // Plain, quoted and block scalars: the column of the offending token.
  expect_one("name: t\nsteps:\n  - id: a\n    if: ${{ 1 = 2 }}\n    set: {x: 1}\n",
             "4:15: bad expression: '=' is not an operator (did you mean '=='?)");
  expect_one("name: t\nsteps:\n  - id: a\n    set: {x: \"ab ${{ (1 }}\"}\n",
             "4:24: bad expression: expected ')' but found end of expression");
  expect_one("name: t\nsteps:\n  - id: a\n    agent:\n      prompt: |\n        Hello ${{ inputs }}\n        Bye ${{ lenght(x) }}\n",
             "7:17: bad expression: unknown function 'lenght' (did you mean 'length'?)");
  expect_one("name: t\nsteps:\n  - id: a\n    if: 1 < < 2\n    set: {x: 1}\n",
             "4:13: bad expression: expected a value but found '<'");
  expect_one("name: t\nsteps:\n  - id: a\n    set: {x: \"${{ 'unterminated }}\"}\n",
             "4:15: bad expression: unterminated '${{' (no matching '}}')");
  expect_one("name: t\nsteps:\n  - id: a\n    set: {x: '${{ }}'}\n", "4:15: bad expression: empty expression in '${{ }}'");
}

TEST(Errors, UnknownTools) {
  std::string base = kTools;
  expect_one(base + "  - id: a\n    agent: {prompt: hi, tools: [lookup, lokup, fs_read]}\n",
             "11:41: unknown tool 'lokup' (did you mean 'lookup'?)");
  expect_one(base + "  - id: a\n    tool: file_wirte\n", "11:11: unknown tool 'file_wirte' (did you mean 'file_write'?)");
  expect_one(base + "  - id: a\n    agent: {prompt: hi, tools: [lookup], tool_choice: file_write}\n",
             "11:55: tool_choice 'file_write' is not in this step's tools (auto, required, none or one of the tools)");
  expect_one(base + "  - id: a\n    agent: {prompt: hi, tools: [], tool_choice: required}\n",
             "11:49: tool_choice 'required' needs at least one tool");
  expect_one("name: t\nsteps:\n  - id: a\n    tool: echo\n", "4:11: unknown tool 'echo' (declare it under 'tools:')");
  LoadOptions builtins;
  builtins.builtin_tools = {"file_read", "file_write", "http_get"};
  expect_one("name: t\ntools: [{use: file_wrte}]\nsteps: [{id: a, tool: file_wrte}]\n",
             "2:15: unknown built-in tool 'file_wrte' (did you mean 'file_write'?)", builtins);
}

TEST(Errors, ToolArgumentsMatchParameters) {
  std::string base = kTools;
  expect_one(base + "  - id: a\n    tool: lookup\n    args: {id: x, verbos: true}\n",
             "12:19: tool 'lookup' has no parameter 'verbos' (did you mean 'verbose'?)");
  expect_one(base + "  - id: a\n    tool: lookup\n    args: {verbose: true}\n",
             "12:11: tool 'lookup' requires the argument 'id'");
  expect_one(base + "  - id: a\n    tool: lookup\n", "11:11: tool 'lookup' requires the argument 'id'");
}

TEST(Errors, ToolEntries) {
  EXPECT_EQ(problems("name: t\ntools: [{nme: x}]\nsteps: [{id: a, set: {x: 1}}]\n"),
            (std::vector<std::string>{
                "2:9: a tool needs 'use' (a built-in tool), 'command' (a command tool) or 'mcp' (an MCP server)",
                "2:10: unknown key 'nme' in tool (did you mean 'name'?)"}));
  expect_one("name: t\ntools: [{use: a, command: [b]}]\nsteps: [{id: a, set: {x: 1}}]\n",
             "2:27: a tool has both 'use' and 'command'; declare them as separate tools");
  expect_one("name: t\ntools: [{command: [b]}]\nsteps: [{id: a, set: {x: 1}}]\n",
             "2:9: missing required key 'name' in command tool");
  expect_one("name: t\ntools: [{mcp: {args: [x]}, prefix: p_}]\nsteps: [{id: a, set: {x: 1}}]\n",
             "2:15: 'mcp' needs 'command' (a server program) or 'url'");
  expect_one("name: t\ntools: [{name: x, command: [b], parameters: {type: string}}]\nsteps: [{id: a, set: {x: 1}}]\n",
             "2:52: tool parameters must be an object schema (type: object)");
}

TEST(Errors, JsonSchemas) {
  auto with_schema = [](const std::string& schema) {
    return "name: t\nsteps:\n  - id: a\n    agent:\n      prompt: hi\n      output_schema: " + schema + "\n";
  };
  expect_one(with_schema("{type: object, proprties: {}}"),
             "6:37: unknown JSON Schema keyword 'proprties' in output_schema (did you mean 'properties'?)");
  expect_one(with_schema("{type: objct}"),
             "6:29: unknown JSON Schema type 'objct' (did you mean 'object'?); types: string, number, integer, boolean, "
             "object, array, null");
  expect_one(with_schema("{type: string, format: email}"),
             "6:37: JSON Schema keyword 'format' is not supported (use pattern)");
  expect_one(with_schema("{type: object, properties: {a: {type: string}}, required: [b]}"),
             "6:81: required property 'b' is not defined in properties");
  expect_one(with_schema("{type: array, items: [{type: string}]}"), "6:43: 'items' is one schema (tuple arrays are not supported)");
  expect_one(with_schema("{type: string, minLength: -1}"), "6:48: 'minLength' must be between 0 and 2147483647, got -1");
  expect_one(with_schema("{anyOf: []}"), "6:30: 'anyOf' must list at least one schema");
  expect_one(with_schema("{type: object, properties: {a: {enum: []}}}"), "6:60: 'enum' must list at least one value");
  expect_one(with_schema("[string]"), "6:22: 'output_schema' must be a JSON Schema mapping, got a list");
  expect_one(with_schema("{type: object, properties: {a: {type: string, pattern: 5}}}"),
             "6:77: 'pattern' must be a string, got a number '5'");
  // Rules checked by compiling the schema as the runtime does, located through its JSON pointer.
  expect_one(with_schema("{type: object, properties: {a: {type: string, minLength: 5, maxLength: 2}}}"),
             "6:79: invalid JSON Schema in 'output_schema': minLength 5 is greater than maxLength 2");
  expect_one(with_schema("{type: object, properties: {a: {type: string, pattern: \"(a\"}}}"),
             "6:77: invalid JSON Schema in 'output_schema': invalid pattern '(a': missing ')' at offset 2");
  expect_one(with_schema("{type: [string, string]}"), "6:29: invalid JSON Schema in 'output_schema': 'type' lists 'string' twice");
  // dloop's decoding hint: a boolean, accepted in tool parameters (docs/tool-calls.md "Grounded values").
  expect_one(with_schema("{type: object, properties: {a: {type: string, x-dloop-grounded: yes please}}}"),
             "6:86: 'x-dloop-grounded' must be true or false, got a string 'yes please'");
  EXPECT_TRUE(problems("name: t\ntools: [{name: x, command: [b], parameters: {type: object, properties: "
                       "{id: {type: string, x-dloop-grounded: true}}}}]\nsteps: [{id: a, set: {x: 1}}]\n")
                  .empty());
}

TEST(Errors, Inputs) {
  auto with_inputs = [](const std::string& inputs) {
    return "name: t\ninputs:\n  " + inputs + "\nsteps: [{id: a, set: {x: 1}}]\n";
  };
  expect_one(with_inputs("n: {type: integer, default: two}"), "3:31: default of input 'n' must be an integer, got a string");
  expect_one(with_inputs("n: {type: strng}"),
             "3:13: unknown input type 'strng' (did you mean 'string'?); types: string, integer, number, boolean, object, array");
  expect_one(with_inputs("n: {required: true, default: x}"), "3:32: input 'n' has a default, so it cannot also be required");
  expect_one(with_inputs("n: {type: string, enum: [a, b], default: c}"), "3:44: default of input 'n' is not one of its enum values");
  expect_one(with_inputs("n: {type: number, enum: [1, x]}"), "3:31: enum value of input 'n' must be a number, got a string");
  expect_one(with_inputs("bad name: {type: string}"),
             "3:3: input name 'bad name' must start with a letter or '_' and hold only letters, digits, '_' and '-' (at most 64)");
  expect_one(with_inputs("n: string"), "3:6: 'inputs.n' must be a mapping, got a string 'string'");
}

TEST(Errors, ManyProblemsInOnePass) {
  auto diags = validate_file(std::string(DLOOP_SOURCE_DIR) + "/tests/workflows/data/invalid/many_errors.yaml");
  std::vector<std::string> got;
  for (const auto& d : diags) got.push_back(std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.message);
  const std::vector<std::string> expected = {
      "2:1: unknown key 'stpes' in workflow (did you mean 'steps'?)",
      "4:18: unknown input type 'strng' (did you mean 'string'?); types: string, integer, number, boolean, object, array",
      "7:14: 'command' must be a list of strings such as [./lookup.sh, --json], got a string './lookup.sh'",
      "8:32: unknown JSON Schema keyword 'proprties' in parameters (did you mean 'properties'?)",
      "12:35: unknown input 'tiket' (did you mean 'ticket'?)",
      "13:23: unknown tool 'lokup' (did you mean 'lookup'?)",
      "14:18: 'max_turns' must be an integer, got a string 'four'",
      "15:29: unknown JSON Schema type 'objct' (did you mean 'object'?); types: string, number, integer, boolean, "
      "object, array, null",
      "16:9: duplicate step id 'classify' (first at line 10)",
      "18:14: bad duration '10 sec' for 'timeout' (use a number and a unit: 250ms, 10s, 2m, 1h)",
      "20:19: step 'later' has not run at this point (it comes later, or in another branch)",
      "22:54: bad expression: expected a value but found end of expression",
      "23:5: missing required key 'max_iterations' in repeat_until step 'later' (a hard cap on the number of iterations)",
  };
  EXPECT_EQ(got, expected);
  for (const auto& d : diags) EXPECT_NE(d.file.find("many_errors.yaml"), std::string::npos);
}

TEST(Errors, DiagnosticFormats) {
  Diagnostic d{"flow.yaml", 3, 5, "unknown key 'x'"};
  EXPECT_EQ(d.to_string(), "flow.yaml:3:5: error: unknown key 'x'");
  EXPECT_EQ(d.to_json().dump(), R"({"file":"flow.yaml","line":3,"column":5,"message":"unknown key 'x'"})");
  Diagnostic whole{"flow.yaml", 0, 0, "cannot open the file"};
  EXPECT_EQ(whole.to_string(), "flow.yaml: error: cannot open the file");
}

TEST(Errors, TooManyProblemsAreCounted) {
  std::string text = "name: t\nsteps:\n";
  for (int i = 0; i < 300; ++i) text += "  - id: s" + std::to_string(i) + "\n    sett: 1\n";
  auto diags = validate(text, "flow.yaml");
  ASSERT_EQ(diags.size(), kMaxDiagnostics + 1);
  EXPECT_EQ(diags.back().message, "... and 400 more problems");
}

}  // namespace
}  // namespace dloop::workflows
