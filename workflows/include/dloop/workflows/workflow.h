// The Workflow data model: what a workflow YAML file means once it has been loaded and validated
// (load.h builds it; docs/workflows.md is the user-facing spec). Plain value types with no
// behaviour beyond small lookups; every node records where it came from in the file so that
// run-time errors can point at the YAML too. Strings that may hold `${{ }}` are Values (a
// literal JSON tree or templates) that the runtime evaluates with evaluate_value().
// Immutable after loading, so safe to share between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/status.h"
#include "dloop/workflows/expr.h"

namespace dloop::workflows {

// 1-based line and column (bytes) in the source file; 0 when unknown.
struct Location {
  int line = 0;
  int column = 0;
};

// A YAML value that may contain `${{ }}` templates. A subtree without any template is one
// kLiteral holding the whole JSON tree.
struct Value {
  enum class Kind { kLiteral, kTemplate, kArray, kObject };
  Kind kind = Kind::kLiteral;
  base::Json literal;                                  // kLiteral
  Template tmpl;                                       // kTemplate
  std::vector<Value> items;                            // kArray
  std::vector<std::pair<std::string, Value>> members;  // kObject, in file order
  Location location;

  static Value of(base::Json json) {
    Value v;
    v.literal = std::move(json);
    return v;
  }
};

// Evaluates every template in the value; the result is plain JSON. Errors: the first evaluation
// error (see evaluate()), prefixed with the value's line:column.
base::Result<base::Json> evaluate_value(const Value& value, const EvalContext& context);

enum class InputType { kString, kInteger, kNumber, kBoolean, kObject, kArray };
const char* input_type_name(InputType type);

struct InputSpec {
  std::string name;
  InputType type = InputType::kString;
  std::string description;
  bool required = false;
  std::optional<base::Json> default_value;  // matches `type` (checked at load)
  std::vector<base::Json> enum_values;      // empty: any value of the type
  Location location;
};

// `- use: NAME` (optionally `name: ALIAS`, `with: {...}`): a built-in tool and its configuration.
struct BuiltinTool {
  std::string use;
  Value with;  // an object; may read inputs, run and env
};
// `- name: NAME, command: [...]`: a program that reads the call's JSON arguments on stdin and
// writes a JSON result on stdout.
struct CommandTool {
  Value command;                     // a non-empty list of strings; may read inputs, run and env
  base::Json parameters;             // JSON Schema of the arguments (default {type: object})
  std::optional<int64_t> timeout_ms;
};
// `- mcp: {command, args, env, cwd, timeout}` or `- mcp: {url}`: every tool an MCP server lists
// at run time (docs/mcp.md), optionally narrowed by `include:` / `exclude:` and renamed by `prefix:`.
struct McpServer {
  std::string command;  // empty when url is set
  Value args;           // list of strings
  Value env;            // object of strings
  std::string cwd;      // the server's working directory ("" = dloop's); relative to the workflow file
  std::optional<int64_t> timeout_ms;  // per request (handshake, tools/list, tools/call)
  std::string url;      // streamable HTTP endpoint; empty when command is set
  std::string prefix;   // prepended to the server's tool names ("" = names as the server gives)
  std::vector<std::string> include;  // only these server tools (empty = all)
  std::vector<std::string> exclude;  // never these server tools
};

struct ToolSpec {
  std::string name;  // the name steps use; "" for an mcp entry (its tools are named at run time)
  std::string description;
  std::variant<BuiltinTool, CommandTool, McpServer> spec;
  Location location;

  bool is_builtin() const { return spec.index() == 0; }
  bool is_command() const { return spec.index() == 1; }
  bool is_mcp() const { return spec.index() == 2; }
};

// Error kinds a retry policy can name (`retry.on`).
enum class ErrorKind {
  kAny,            // any failure of the step
  kTimeout,        // the step or a call ran past its timeout
  kToolError,      // a tool reported an error or its process failed
  kModelError,     // the engine failed to produce a call or an answer
  kInvalidOutput,  // output did not match output_schema / a tool's result was not JSON
  kUnavailable,    // a transient failure: busy database, crashed MCP server, ...
};
const char* error_kind_name(ErrorKind kind);
std::optional<ErrorKind> parse_error_kind(std::string_view name);

struct RetryPolicy {
  int max_attempts = 1;       // total attempts including the first, >= 1
  int64_t backoff_ms = 1000;  // delay before the second attempt
  double multiplier = 2.0;    // each further delay is the previous one times this (>= 1)
  std::vector<ErrorKind> on = {ErrorKind::kAny};
  Location location;
};

struct Step;

struct AgentStep {
  Value prompt;                                   // string template
  std::optional<Value> system;                    // string template
  std::optional<std::vector<std::string>> tools;  // allowlist; nullopt = every declared tool
  std::string tool_choice = "auto";               // auto | required | none | a tool name
  int max_turns = 8;
  std::string reasoning;                          // "" (engine default) | instant | low | medium | high
  std::optional<base::Json> output_schema;        // the final answer is JSON matching this
};

struct ToolStep {
  std::string tool;
  Value args;  // an object
  Location tool_location;
};

// A step with `then:` (and optionally `else:`); its condition is Step::condition.
struct IfStep {
  std::vector<Step> then_steps;
  std::vector<Step> else_steps;
};

struct ForEachStep {
  Value items;                 // a list, or a template yielding one
  std::string as = "item";     // the loop variable; `index` is the 0-based position
  int max_parallel = 1;
  std::vector<Step> steps;
};

struct RepeatUntilStep {
  Template until;              // checked after each iteration; `index` is the iteration (0-based)
  int max_iterations = 0;      // hard cap, required
  std::vector<Step> steps;
};

struct ParallelStep {
  std::vector<Step> branches;  // each branch is one step; they run concurrently
};

struct SetStep {
  std::vector<std::pair<std::string, Value>> values;  // the step's output is this object
};

using StepKind = std::variant<AgentStep, ToolStep, IfStep, ForEachStep, RepeatUntilStep, ParallelStep, SetStep>;
const char* step_kind_name(const StepKind& kind);  // "agent", "tool", "if", ...

struct Step {
  std::string id;
  std::string description;
  std::optional<Template> condition;  // `if:`; for an IfStep it chooses then/else
  std::optional<int64_t> timeout_ms;
  std::optional<RetryPolicy> retry;
  bool continue_on_error = false;
  StepKind kind;
  Location location;
};

struct Workflow {
  std::string name;
  std::string description;
  std::string model = "default";  // "default" (the bundled model) or a GGUF path
  std::string device = "cpu";     // "cpu" or "cuda": where the model's forward passes run
  std::string source;             // the file name given to the loader
  std::vector<InputSpec> inputs;
  std::vector<std::string> env;   // environment variables expressions may read as env.NAME
  std::vector<std::string> secret_env;  // the names of `env` marked `secret: true` (redacted in traces)
  std::vector<ToolSpec> tools;
  std::vector<Step> steps;
  std::vector<std::pair<std::string, Value>> outputs;
  Location location;

  // The step with this id anywhere in the tree (nested steps included); nullptr when absent.
  const Step* find_step(std::string_view id) const;
  const ToolSpec* find_tool(std::string_view name) const;
  const InputSpec* find_input(std::string_view name) const;
};

// The direct children of a step (then + else, loop bodies, parallel branches); empty otherwise.
std::vector<const Step*> child_steps(const Step& step);

}  // namespace dloop::workflows
