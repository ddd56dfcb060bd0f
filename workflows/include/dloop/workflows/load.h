// Loading and validating workflow files: YAML text -> a validated Workflow, or every problem
// found, each with file:line:column, in one pass. What is checked: YAML syntax (parsing stops at
// the first syntax error, so that one is reported alone), unknown keys (with did-you-mean), wrong
// types, missing required keys, duplicate step ids and tool names, references to unknown or not
// yet available steps, inputs and tools, expression syntax (the column of the bad token in the
// file), durations, and the structure of JSON Schemas (output_schema, tool parameters).
// Never throws; a file that is not valid is a value (diagnostics), never a crash.
// Thread-safe: every function is pure apart from reading the file.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/status.h"
#include "dloop/workflows/workflow.h"

namespace dloop::workflows {

// Size limits that keep a hostile file from exhausting memory or the stack.
inline constexpr size_t kMaxFileBytes = 4 << 20;
inline constexpr int kMaxYamlDepth = 64;           // nested mappings/lists
inline constexpr size_t kMaxYamlNodes = 200000;    // after alias expansion
inline constexpr size_t kMaxDiagnostics = 200;     // further problems are counted, not listed

struct Diagnostic {
  std::string file;
  int line = 0;    // 1-based; 0 when the problem is the whole file (unreadable, too large)
  int column = 0;  // 1-based
  std::string message;

  // "flow.yaml:3:5: error: unknown key 'stpes' in workflow (did you mean 'steps'?)"
  std::string to_string() const;
  // {"file": ..., "line": ..., "column": ..., "message": ...}
  base::Json to_json() const;
};

struct LoadOptions {
  // The built-in tool names of this build. When non-empty, every `use:` must be one of them
  // (with a did-you-mean); when empty, any `use:` name is accepted.
  std::vector<std::string> builtin_tools;
};

struct LoadResult {
  std::optional<Workflow> workflow;     // set exactly when diagnostics is empty
  std::vector<Diagnostic> diagnostics;  // sorted by line, then column
};

// Parses and validates. `name` is the file name used in diagnostics and Workflow::source.
LoadResult parse_workflow(std::string_view text, std::string_view name, const LoadOptions& options = {});
// Reads `path` first: an unreadable or oversized file is one diagnostic with line 0.
LoadResult parse_workflow_file(const std::string& path, const LoadOptions& options = {});

// The Workflow, or invalid_argument whose message is the first diagnostic plus "(and N more
// problems)"; not_found / io when the file cannot be read.
base::Result<Workflow> load_string(std::string_view text, std::string_view name, const LoadOptions& options = {});
base::Result<Workflow> load_file(const std::string& path, const LoadOptions& options = {});

// Every diagnostic; empty when the file is valid.
std::vector<Diagnostic> validate(std::string_view text, std::string_view name, const LoadOptions& options = {});
std::vector<Diagnostic> validate_file(const std::string& path, const LoadOptions& options = {});

// Binds a run's inputs: `given` is an object of input values. Applies defaults, and checks that
// required inputs are present, that no unknown input is given, and that values match their type
// and enum. Returns the complete inputs object in declaration order. Errors: invalid_argument
// naming the input.
base::Result<base::Json> resolve_inputs(const Workflow& workflow, const base::Json& given);
// Converts command-line text (`--input n=3`) to a value of the input's type: strings as they
// are; integer, number and boolean parsed; object and array parsed as JSON.
base::Result<base::Json> parse_input_text(const InputSpec& input, std::string_view text);

}  // namespace dloop::workflows
