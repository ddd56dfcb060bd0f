// The top level of a workflow file: name, description, model, env, inputs, tools, steps and
// outputs, plus the entry points of load.h. Sections are loaded in a fixed order (env, inputs,
// tools, steps, outputs) whatever their order in the file, so references can be checked; the
// diagnostics are sorted by position at the end.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "dloop/base/strings.h"
#include "loader.h"

namespace dloop::workflows::detail {
namespace {

const std::vector<std::string> kTopKeys = {"name", "description", "model", "device", "env", "inputs", "tools", "steps", "outputs"};
const std::vector<std::string> kInputKeys = {"type", "description", "required", "default", "enum"};
const std::vector<std::string> kInputTypes = {"string", "integer", "number", "boolean", "object", "array"};

}  // namespace

Loader::Loader(std::string_view text, std::string_view name, const LoadOptions& options)
    : text_(text), name_(name), options_(options), lines_(text) {}

LoadResult Loader::run() {
  workflow_.source = name_;
  std::optional<YNode> root = parse_yaml(text_, issues_);
  if (root) {
    if (root->is_null()) {
      issues_.error({1, 1}, "the file is empty: a workflow is a mapping with at least 'name' and 'steps'");
    } else if (!root->is_map()) {
      issues_.error(root->location, std::string("a workflow file must be a mapping (name, steps, ...), got ") +
                                        type_phrase(*root));
    } else {
      load_top(*root);
      check_reads();
    }
  }
  LoadResult result;
  for (const auto& issue : issues_.all()) {
    result.diagnostics.push_back({name_, issue.location.line, issue.location.column, issue.message});
  }
  std::stable_sort(result.diagnostics.begin(), result.diagnostics.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  if (result.diagnostics.size() > kMaxDiagnostics) {
    const size_t more = result.diagnostics.size() - kMaxDiagnostics;
    result.diagnostics.resize(kMaxDiagnostics);
    result.diagnostics.push_back({name_, 0, 0, "... and " + std::to_string(more) + " more problems"});
  }
  if (result.diagnostics.empty()) result.workflow = std::move(workflow_);
  return result;
}

void Loader::load_top(const YNode& root) {
  check_keys(root, kTopKeys, "workflow");
  workflow_.location = root.location;
  if (const YNode* n = find(root, "name")) {
    if (auto s = read_string(n, "name")) {
      if (s->empty()) issues_.error(n->location, "'name' must not be empty");
      workflow_.name = *s;
    }
  } else {
    missing(root, "name", "workflow");
  }
  if (auto s = read_string(find(root, "description"), "description")) workflow_.description = *s;
  if (auto s = read_string(find(root, "model"), "model")) workflow_.model = *s;
  if (const YNode* n = find(root, "device")) {
    if (auto s = read_string(n, "device")) {
      if (*s == "cpu" || *s == "cuda") {
        workflow_.device = *s;
      } else {
        issues_.error(n->location, "'device' must be cpu or cuda, got '" + *s + "'");
      }
    }
  }
  scope_.steps_allowed = false;
  scope_dirty_ = true;
  if (const YNode* n = find(root, "env")) load_env(*n);
  if (const YNode* n = find(root, "inputs")) load_inputs(*n);
  if (const YNode* n = find(root, "tools")) load_tools(*n);
  scope_.steps_allowed = true;
  scope_dirty_ = true;
  if (const YNode* n = find(root, "steps")) {
    workflow_.steps = load_steps(*n, "steps", false);
  } else {
    missing(root, "steps", "workflow");
  }
  if (const YNode* n = find(root, "outputs")) load_outputs(*n);
}

// `env:` items are names, or `{name: NAME, secret: true}` for a value trace exports redact.
void Loader::load_env(const YNode& node) {
  if (!expect_list(node, "env")) return;
  for (const YNode& item : node.items) {
    std::optional<std::string> name;
    bool secret = false;
    if (item.is_map()) {
      check_keys(item, {"name", "secret"}, "env item");
      name = read_string(find(item, "name"), "name");
      if (!find(item, "name")) missing(item, "name", "env item");
      if (auto b = read_bool(find(item, "secret"), "secret")) secret = *b;
    } else {
      name = read_string(&item, "env item");
    }
    if (!name || !valid_name(item, *name, "environment variable")) continue;
    workflow_.env.push_back(*name);
    if (secret) workflow_.secret_env.push_back(*name);
  }
}

void Loader::load_inputs(const YNode& node) {
  if (!expect_map(node, "inputs")) return;
  for (const auto& [key, value] : node.members) load_input(key, value);
}

void Loader::load_input(const YNode& key, const YNode& node) {
  InputSpec in;
  in.name = key.scalar;
  in.location = key.location;
  valid_name(key, in.name, "input name");
  const std::string context = "input '" + in.name + "'";
  if (!expect_map(node, "inputs." + in.name)) return;
  check_keys(node, kInputKeys, context);
  if (auto t = read_string(find(node, "type"), "type")) {
    auto it = std::find(kInputTypes.begin(), kInputTypes.end(), *t);
    if (it == kInputTypes.end()) {
      std::string msg = "unknown input type '" + *t + "'";
      if (auto close = closest_name(*t, kInputTypes)) msg += " (did you mean '" + *close + "'?)";
      issues_.error(find(node, "type")->location, msg + "; types: string, integer, number, boolean, object, array");
    } else {
      in.type = static_cast<InputType>(it - kInputTypes.begin());
    }
  }
  if (auto s = read_string(find(node, "description"), "description")) in.description = *s;
  if (auto b = read_bool(find(node, "required"), "required")) in.required = *b;
  if (const YNode* e = find(node, "enum"); e && expect_list(*e, "enum")) {
    for (const auto& item : e->items) {
      base::Json v = to_json(item);
      if (!matches_input_type(in.type, v)) {
        issues_.error(item.location, "enum value of " + context + " must be " + input_type_phrase(in.type) + ", got " +
                                         type_phrase(item));
      }
      in.enum_values.push_back(std::move(v));
    }
    if (e->items.empty()) issues_.error(e->location, "'enum' must list at least one value");
  }
  if (const YNode* d = find(node, "default")) {
    base::Json v = to_json(*d);
    if (!matches_input_type(in.type, v)) {
      issues_.error(d->location, "default of " + context + " must be " + input_type_phrase(in.type) + ", got " +
                                     type_phrase(*d));
    } else if (!in.enum_values.empty() && !json_in(in.enum_values, v)) {
      issues_.error(d->location, "default of " + context + " is not one of its enum values");
    }
    if (in.required) issues_.error(d->location, context + " has a default, so it cannot also be required");
    in.default_value = std::move(v);
  }
  workflow_.inputs.push_back(std::move(in));
}

void Loader::load_outputs(const YNode& node) {
  if (!expect_map(node, "outputs")) return;
  for (const auto& [key, value] : node.members) workflow_.outputs.emplace_back(key.scalar, to_value(value));
}

}  // namespace dloop::workflows::detail

namespace dloop::workflows {

std::string Diagnostic::to_string() const {
  if (line <= 0) return file + ": error: " + message;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": error: " + message;
}

base::Json Diagnostic::to_json() const {
  base::Json j = base::Json::object();
  j.set("file", file);
  j.set("line", line);
  j.set("column", column);
  j.set("message", message);
  return j;
}

LoadResult parse_workflow(std::string_view text, std::string_view name, const LoadOptions& options) {
  if (text.size() > kMaxFileBytes) {
    LoadResult r;
    r.diagnostics.push_back({std::string(name), 0, 0, "the file is larger than " +
                                                         std::to_string(kMaxFileBytes >> 20) + " MiB"});
    return r;
  }
  detail::Loader loader(text, name, options);
  return loader.run();
}

LoadResult parse_workflow_file(const std::string& path, const LoadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    LoadResult r;
    r.diagnostics.push_back({path, 0, 0, "cannot open the file: " + std::string(std::strerror(errno))});
    return r;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_workflow(text.str(), path, options);
}

namespace {
base::Result<Workflow> to_result(LoadResult r) {
  if (r.workflow) return std::move(*r.workflow);
  const Diagnostic& first = r.diagnostics.front();
  std::string msg = first.to_string();
  if (r.diagnostics.size() > 1) {
    size_t more = r.diagnostics.size() - 1;
    msg += " (and " + std::to_string(more) + (more == 1 ? " more problem)" : " more problems)");
  }
  if (first.line == 0 && first.message.rfind("cannot open", 0) == 0) return base::not_found(msg);
  return base::invalid_argument(msg);
}
}  // namespace

base::Result<Workflow> load_string(std::string_view text, std::string_view name, const LoadOptions& options) {
  return to_result(parse_workflow(text, name, options));
}

base::Result<Workflow> load_file(const std::string& path, const LoadOptions& options) {
  return to_result(parse_workflow_file(path, options));
}

std::vector<Diagnostic> validate(std::string_view text, std::string_view name, const LoadOptions& options) {
  return parse_workflow(text, name, options).diagnostics;
}

std::vector<Diagnostic> validate_file(const std::string& path, const LoadOptions& options) {
  return parse_workflow_file(path, options).diagnostics;
}

}  // namespace dloop::workflows
