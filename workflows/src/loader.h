// The workflow loader (private to workflows/): walks the located YAML tree, builds the Workflow
// and reports every problem to an Issues list. Split by concern over several files:
// load_workflow.cpp (top level, inputs, tools, outputs), load_steps.cpp (steps),
// load_fields.cpp (typed field readers, unknown keys), load_values.cpp (values, templates,
// expression locations), check_refs.cpp (what each expression reads), schema_check.cpp (JSON
// Schema structure). One Loader per load; not thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnostics.h"
#include "dloop/workflows/load.h"
#include "yaml_tree.h"

namespace dloop::workflows::detail {

// Input typing shared by the loader and resolve_inputs (inputs.cpp).
bool matches_input_type(InputType type, const base::Json& value);
const char* input_type_phrase(InputType type);  // "a string", "an integer", ...
bool json_in(const std::vector<base::Json>& values, const base::Json& value);

// What an expression at some place may read.
struct Scope {
  bool steps_allowed = true;               // false in tool configuration and inputs
  std::vector<std::string> loop_vars;      // names bound by enclosing loops, innermost last
  std::vector<std::string> visible_steps;  // steps that have finished before this point
  std::vector<std::string> enclosing;      // ids of the steps around this point, outermost first
};

// One path an expression reads, located in the file, with the scope of its expression.
struct ReadSite {
  PathRef path;
  std::vector<Location> locations;  // of each segment
  size_t scope_index = 0;           // into Loader::scopes_
};

struct StepInfo {
  Location location;
  std::vector<std::string> loops;  // ids of enclosing for_each / repeat_until steps
  std::optional<std::vector<std::string>> output_keys;  // known keys of the output object
};

class Loader {
 public:
  Loader(std::string_view text, std::string_view name, const LoadOptions& options);
  LoadResult run();

 private:
  // load_workflow.cpp
  void load_top(const YNode& root);
  void load_inputs(const YNode& node);
  void load_input(const YNode& key, const YNode& node);
  void load_env(const YNode& node);
  void load_tools(const YNode& node);
  void load_tool(const YNode& node);
  void load_command_tool(const YNode& node, ToolSpec& tool);
  void load_mcp_tool(const YNode& node, ToolSpec& tool);
  void load_outputs(const YNode& node);
  void add_tool_name(const std::string& name, Location where);

  // load_steps.cpp
  std::vector<Step> load_steps(const YNode& node, const std::string& what, bool allow_empty);
  std::optional<Step> load_step(const YNode& node);
  bool load_step_id(const YNode& node, Step& step);
  void load_common(const YNode& node, Step& step);
  void load_retry(const YNode& node, Step& step);
  void load_kind(const YNode& node, const std::string& kind, Step& step);
  void load_agent(const YNode& node, Step& step);
  void load_agent_tools(const YNode& node, AgentStep& agent);
  void load_tool_step(const YNode& node, Step& step);
  void check_tool_args(const YNode& args, const std::string& tool);
  void load_if(const YNode& node, Step& step);
  void load_for_each(const YNode& node, Step& step);
  void load_repeat_until(const YNode& node, Step& step);
  void load_parallel(const YNode& node, Step& step);
  void load_set(const YNode& node, Step& step);
  std::vector<Step> load_body(const YNode& node, const std::string& what, const std::string& id,
                              const std::vector<std::string>& loop_vars);
  void check_tool_name(const YNode& node, const std::string& name);

  // load_fields.cpp
  const YNode* find(const YNode& map, std::string_view key) const;
  void check_keys(const YNode& map, const std::vector<std::string>& allowed, const std::string& context);
  bool expect_map(const YNode& node, const std::string& what);
  bool expect_list(const YNode& node, const std::string& what);
  void type_error(const YNode& node, const std::string& what, const char* expected);
  std::optional<std::string> read_string(const YNode* node, const std::string& what);
  std::optional<int64_t> read_int(const YNode* node, const std::string& what, int64_t min, int64_t max);
  std::optional<double> read_number(const YNode* node, const std::string& what, int64_t min);
  std::optional<bool> read_bool(const YNode* node, const std::string& what);
  std::optional<int64_t> read_duration(const YNode* node, const std::string& what);
  std::optional<std::vector<std::string>> read_string_list(const YNode* node, const std::string& what);
  bool valid_name(const YNode& node, const std::string& name, const std::string& what);
  void missing(const YNode& map, const std::string& key, const std::string& context);

  // load_values.cpp
  Value to_value(const YNode& node);
  std::optional<Template> to_template(const YNode& node, const std::string& what);
  std::optional<Template> to_condition(const YNode& node, const std::string& what);
  std::optional<Template> parse_located(const YNode& node, std::string_view text, bool bare);
  void note_reads(const YNode& node, const Template& tmpl);
  Location locate(const YNode& scalar, size_t offset) const;
  size_t push_scope();

  // check_refs.cpp
  void check_reads();
  void check_read(const ReadSite& site);
  void check_step_read(const ReadSite& site, const Scope& scope);
  std::string unavailable_reason(const std::string& id, const Scope& scope) const;

  // schema_check.cpp
  void check_schema(const YNode& node, const std::string& what, int depth);
  void check_schema_keyword(const std::string& key, const YNode& value, int depth);
  void check_schema_compiles(const YNode& node, const std::string& what);

  std::string_view text_;
  std::string name_;
  const LoadOptions& options_;
  LineIndex lines_;
  Issues issues_;
  Workflow workflow_;

  Scope scope_;                 // the scope at the point being loaded
  std::vector<Scope> scopes_;   // snapshots referenced by read sites
  bool scope_dirty_ = true;     // scope_ changed since the last snapshot
  std::vector<ReadSite> reads_;

  std::map<std::string, StepInfo> steps_;             // every step id seen
  std::vector<std::string> loop_stack_;               // ids of enclosing loops
  std::map<std::string, Location> tool_names_;        // declared tool names
  std::vector<std::string> mcp_prefixes_;
  bool open_mcp_ = false;                             // an mcp entry without prefix: any name may exist
  std::map<std::string, const YNode*> tool_params_;   // command tools' parameter schemas
};

}  // namespace dloop::workflows::detail
