// The step kinds that do work: agent (a model loop with tools), tool (one direct call) and set
// (named values). Checks that every tool a step names is declared, that tool_choice fits the
// allowlist, that output_schema is a well-formed JSON Schema, and that a direct call's arguments
// match the declared parameters of a command tool.
#include <algorithm>

#include "dloop/base/strings.h"
#include "loader.h"

namespace dloop::workflows::detail {
namespace {

const std::vector<std::string> kAgentKeys = {"prompt", "system", "tools", "tool_choice", "max_turns", "reasoning",
                                             "output_schema"};
const std::vector<std::string> kReasoning = {"instant", "low", "medium", "high"};

// The property names of an object schema whose extra properties are not allowed; nullopt when
// any key may appear.
std::optional<std::vector<std::string>> closed_properties(const YNode& schema) {
  if (!schema.is_map()) return std::nullopt;
  const YNode* props = nullptr;
  const YNode* extra = nullptr;
  for (const auto& [k, v] : schema.members) {
    if (k.scalar == "properties") props = &v;
    if (k.scalar == "additionalProperties") extra = &v;
  }
  if (!props || !props->is_map()) return std::nullopt;
  if (extra && !(extra->type() == YNode::Type::kBool && (extra->scalar[0] == 'f' || extra->scalar[0] == 'F'))) {
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (const auto& [k, v] : props->members) names.push_back(k.scalar);
  return names;
}

}  // namespace

void Loader::load_agent(const YNode& node, Step& step) {
  AgentStep a;
  const YNode& body = *find(node, "agent");
  if (!expect_map(body, "agent")) return;
  const std::string context = "agent step '" + step.id + "'";
  check_keys(body, kAgentKeys, context);
  if (const YNode* p = find(body, "prompt")) {
    if (auto t = to_template(*p, "prompt")) a.prompt.tmpl = std::move(*t);
    a.prompt.kind = Value::Kind::kTemplate;
    a.prompt.location = p->location;
  } else {
    missing(body, "prompt", context);
  }
  if (const YNode* s = find(body, "system")) {
    if (auto t = to_template(*s, "system")) {
      Value v;
      v.kind = Value::Kind::kTemplate;
      v.tmpl = std::move(*t);
      v.location = s->location;
      a.system = std::move(v);
    }
  }
  load_agent_tools(body, a);
  if (auto n = read_int(find(body, "max_turns"), "max_turns", 1, 1000)) a.max_turns = static_cast<int>(*n);
  if (const YNode* r = find(body, "reasoning")) {
    if (auto s = read_string(r, "reasoning")) {
      if (std::find(kReasoning.begin(), kReasoning.end(), *s) != kReasoning.end()) {
        a.reasoning = *s;
      } else {
        std::string msg = "unknown reasoning level '" + *s + "'";
        if (auto close = closest_name(*s, kReasoning)) msg += " (did you mean '" + *close + "'?)";
        issues_.error(r->location, msg + "; levels: instant, low, medium, high");
      }
    }
  }
  if (const YNode* o = find(body, "output_schema")) {
    const size_t before = issues_.size();
    check_schema(*o, "output_schema", 0);
    if (issues_.size() == before) check_schema_compiles(*o, "output_schema");
    if (o->is_map()) {
      a.output_schema = to_json(*o);
      auto it = steps_.find(step.id);
      if (it != steps_.end()) it->second.output_keys = closed_properties(*o);
    }
  }
  step.kind = std::move(a);
}

void Loader::load_agent_tools(const YNode& body, AgentStep& a) {
  if (const YNode* t = find(body, "tools")) {
    if (auto names = read_string_list(t, "tools")) {
      for (size_t i = 0; i < names->size(); ++i) check_tool_name(t->items[i], (*names)[i]);
      a.tools = std::move(*names);
    }
  }
  const YNode* choice = find(body, "tool_choice");
  auto c = read_string(choice, "tool_choice");
  if (!c) return;
  a.tool_choice = *c;
  if (*c == "auto" || *c == "none") return;
  if (*c == "required") {
    if (a.tools && a.tools->empty()) issues_.error(choice->location, "tool_choice 'required' needs at least one tool");
    return;
  }
  // A specific tool: it must be declared and allowed.
  if (a.tools && std::find(a.tools->begin(), a.tools->end(), *c) == a.tools->end()) {
    issues_.error(choice->location, "tool_choice '" + *c + "' is not in this step's tools (auto, required, none or one of the tools)");
    return;
  }
  check_tool_name(*choice, *c);
}

void Loader::load_tool_step(const YNode& node, Step& step) {
  ToolStep t;
  const YNode* name = find(node, "tool");
  t.tool_location = name->location;
  if (auto s = read_string(name, "tool")) {
    t.tool = *s;
    check_tool_name(*name, *s);
  }
  const YNode* args = find(node, "args");
  if (args) {
    if (args->is_map()) {
      t.args = to_value(*args);
    } else if (!args->is_string() || !has_expression(args->scalar)) {
      type_error(*args, "args", "a mapping or one ${{ }} expression that yields an object");
    } else if (auto tmpl = to_condition(*args, "args")) {  // one expression yielding an object
      t.args.kind = Value::Kind::kTemplate;
      t.args.tmpl = std::move(*tmpl);
      t.args.location = args->location;
    }
  } else {
    t.args = Value::of(base::Json::object());
  }
  if (!t.tool.empty() && (!args || args->is_map())) check_tool_args(args ? *args : *name, t.tool);
  step.kind = std::move(t);
}

// Direct calls to a command tool whose parameters list their properties: every argument must be
// a declared parameter (unless additionalProperties allows more) and every required one given.
void Loader::check_tool_args(const YNode& args, const std::string& tool) {
  auto it = tool_params_.find(tool);
  if (it == tool_params_.end()) return;
  const YNode& schema = *it->second;
  const bool have_args = args.is_map();
  if (auto names = closed_properties(schema); names && have_args) {
    for (const auto& [k, v] : args.members) {
      if (std::find(names->begin(), names->end(), k.scalar) != names->end()) continue;
      std::string msg = "tool '" + tool + "' has no parameter '" + k.scalar + "'";
      if (auto close = closest_name(k.scalar, *names)) msg += " (did you mean '" + *close + "'?)";
      issues_.error(k.location, msg);
    }
  }
  const YNode* required = find(schema, "required");
  if (!required || !required->is_seq()) return;
  for (const auto& r : required->items) {
    if (!r.is_string()) continue;
    if (have_args && find(args, r.scalar)) continue;
    issues_.error(args.location, "tool '" + tool + "' requires the argument '" + r.scalar + "'");
  }
}

void Loader::load_set(const YNode& node, Step& step) {
  SetStep s;
  const YNode& values = *find(node, "set");
  if (!expect_map(values, "set")) return;
  if (values.members.empty()) issues_.error(values.location, "'set' must name at least one value");
  std::vector<std::string> keys;
  for (const auto& [k, v] : values.members) {
    s.values.emplace_back(k.scalar, to_value(v));
    keys.push_back(k.scalar);
  }
  auto it = steps_.find(step.id);
  if (it != steps_.end()) it->second.output_keys = std::move(keys);
  step.kind = std::move(s);
}

}  // namespace dloop::workflows::detail
