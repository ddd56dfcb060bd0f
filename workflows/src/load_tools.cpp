// The `tools:` section: built-in tools (`use:` + `with:`), command tools (`name:` + `command:` +
// `parameters:`) and MCP servers (`mcp:` + optional `prefix:`). Records the declared names for
// the checks of agent allowlists and tool steps. Tool configuration may read inputs, run and env
// but no step output (tools are set up before the first step).
#include <algorithm>

#include "dloop/base/strings.h"
#include "loader.h"

namespace dloop::workflows::detail {
namespace {

const std::vector<std::string> kToolKeys = {"use", "name", "description", "with", "command", "parameters", "timeout",
                                            "mcp", "prefix", "include", "exclude"};
const std::vector<std::string> kBuiltinKeys = {"use", "name", "description", "with"};
const std::vector<std::string> kCommandKeys = {"name", "description", "command", "parameters", "timeout"};
const std::vector<std::string> kMcpEntryKeys = {"mcp", "prefix", "description", "include", "exclude"};
const std::vector<std::string> kMcpKeys = {"command", "args", "env", "cwd", "timeout", "url"};

}  // namespace

void Loader::load_tools(const YNode& node) {
  if (!expect_list(node, "tools")) return;
  for (const auto& item : node.items) load_tool(item);
}

void Loader::add_tool_name(const std::string& name, Location where) {
  auto [it, inserted] = tool_names_.emplace(name, where);
  if (!inserted) {
    issues_.error(where, "duplicate tool name '" + name + "' (first declared at line " +
                             std::to_string(it->second.line) + ")");
  }
}

void Loader::load_tool(const YNode& node) {
  if (!expect_map(node, "tools item")) return;
  ToolSpec tool;
  tool.location = node.location;
  std::vector<std::string> kinds;
  for (const char* k : {"use", "command", "mcp"}) {
    if (find(node, k)) kinds.emplace_back(k);
  }
  if (kinds.empty()) {
    check_keys(node, kToolKeys, "tool");
    issues_.error(node.location, "a tool needs 'use' (a built-in tool), 'command' (a command tool) or 'mcp' (an MCP server)");
    return;
  }
  if (kinds.size() > 1) {
    issues_.error(find(node, kinds[1])->location, "a tool has both '" + kinds[0] + "' and '" + kinds[1] +
                                                      "'; declare them as separate tools");
    return;
  }
  if (auto d = read_string(find(node, "description"), "description")) tool.description = *d;
  if (kinds[0] == "use") {
    check_keys(node, kBuiltinKeys, "built-in tool");
    BuiltinTool b;
    if (auto use = read_string(find(node, "use"), "use")) {
      b.use = *use;
      const auto& known = options_.builtin_tools;
      if (!known.empty() && std::find(known.begin(), known.end(), *use) == known.end()) {
        std::string msg = "unknown built-in tool '" + *use + "'";
        if (auto close = closest_name(*use, known)) msg += " (did you mean '" + *close + "'?)";
        issues_.error(find(node, "use")->location, msg);
      }
      tool.name = *use;
    }
    if (const YNode* n = find(node, "name")) {
      if (auto s = read_string(n, "name"); s && valid_name(*n, *s, "tool name")) tool.name = *s;
    }
    if (const YNode* w = find(node, "with"); w && expect_map(*w, "with")) b.with = to_value(*w);
    if (!tool.name.empty()) add_tool_name(tool.name, tool.location);
    tool.spec = std::move(b);
  } else if (kinds[0] == "command") {
    check_keys(node, kCommandKeys, "command tool");
    load_command_tool(node, tool);
  } else {
    check_keys(node, kMcpEntryKeys, "mcp tool entry");
    load_mcp_tool(node, tool);
  }
  workflow_.tools.push_back(std::move(tool));
}

void Loader::load_command_tool(const YNode& node, ToolSpec& tool) {
  CommandTool c;
  if (const YNode* n = find(node, "name")) {
    if (auto s = read_string(n, "name"); s && valid_name(*n, *s, "tool name")) {
      tool.name = *s;
      add_tool_name(*s, tool.location);
    }
  } else {
    missing(node, "name", "command tool");
  }
  const YNode* cmd = find(node, "command");
  if (!cmd->is_seq()) {
    type_error(*cmd, "command", "a list of strings such as [./lookup.sh, --json]");
  } else if (cmd->items.empty()) {
    issues_.error(cmd->location, "'command' must name a program");
  } else {
    for (const auto& arg : cmd->items) {
      if (!arg.is_string()) type_error(arg, "command item", "a string");
    }
    c.command = to_value(*cmd);
  }
  c.parameters = base::Json::object({{"type", "object"}});
  if (const YNode* p = find(node, "parameters")) {
    const size_t before = issues_.size();
    check_schema(*p, "parameters", 0);
    if (issues_.size() == before) check_schema_compiles(*p, "parameters");
    if (p->is_map()) {
      const YNode* type = find(*p, "type");
      if (type && type->is_string() && type->scalar != "object") {
        issues_.error(type->location, "tool parameters must be an object schema (type: object)");
      }
      c.parameters = to_json(*p);
      if (!tool.name.empty()) tool_params_[tool.name] = p;
    }
  }
  c.timeout_ms = read_duration(find(node, "timeout"), "timeout");
  tool.spec = std::move(c);
}

void Loader::load_mcp_tool(const YNode& node, ToolSpec& tool) {
  McpServer m;
  const YNode* server = find(node, "mcp");
  if (expect_map(*server, "mcp")) {
    check_keys(*server, kMcpKeys, "mcp");
    const YNode* command = find(*server, "command");
    const YNode* url = find(*server, "url");
    if (!command && !url) issues_.error(server->location, "'mcp' needs 'command' (a server program) or 'url'");
    if (command && url) issues_.error(url->location, "'mcp' takes 'command' or 'url', not both");
    if (auto s = read_string(command, "command")) m.command = *s;
    if (auto s = read_string(url, "url")) m.url = *s;
    if (const YNode* args = find(*server, "args"); args && expect_list(*args, "args")) {
      for (const auto& a : args->items) {
        if (!a.is_string() && !a.is_scalar()) type_error(a, "args item", "a string");
      }
      m.args = to_value(*args);
    }
    if (const YNode* env = find(*server, "env"); env && expect_map(*env, "env")) m.env = to_value(*env);
    if (auto s = read_string(find(*server, "cwd"), "cwd")) m.cwd = *s;
    m.timeout_ms = read_duration(find(*server, "timeout"), "timeout");
    if (url && (find(*server, "cwd") || find(*server, "args") || find(*server, "env"))) {
      issues_.error(url->location, "'url' takes no 'args', 'env' or 'cwd' (those are for a server program)");
    }
  }
  if (auto list = read_string_list(find(node, "include"), "include")) m.include = *list;
  if (auto list = read_string_list(find(node, "exclude"), "exclude")) m.exclude = *list;
  if (const YNode* p = find(node, "prefix")) {
    if (auto s = read_string(p, "prefix"); s && valid_name(*p, *s, "tool prefix")) {
      m.prefix = *s;
      mcp_prefixes_.push_back(*s);
    }
  } else {
    open_mcp_ = true;
  }
  tool.spec = std::move(m);
}

// A name an agent allowlist, tool_choice or tool step uses must be declared.
void Loader::check_tool_name(const YNode& node, const std::string& name) {
  if (tool_names_.count(name)) return;
  for (const auto& prefix : mcp_prefixes_) {
    if (base::starts_with(name, prefix) && name.size() > prefix.size()) return;
  }
  if (open_mcp_) return;  // an MCP server without a prefix may provide any name
  std::vector<std::string> names;
  for (const auto& [n, loc] : tool_names_) names.push_back(n);
  std::string msg = "unknown tool '" + name + "'";
  if (auto close = closest_name(name, names)) {
    msg += " (did you mean '" + *close + "'?)";
  } else if (names.empty() && mcp_prefixes_.empty()) {
    msg += " (declare it under 'tools:')";
  }
  issues_.error(node.location, msg);
}

}  // namespace dloop::workflows::detail
