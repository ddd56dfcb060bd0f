// Small behaviour of the data model: lookups over the step tree, names of enums, and evaluation
// of Values (templated YAML values) against an EvalContext. Thread-safe: pure functions over
// immutable data.
#include "dloop/workflows/workflow.h"

namespace dloop::workflows {
namespace {

const char* const kErrorKindNames[] = {"any", "timeout", "tool_error", "model_error", "invalid_output", "unavailable"};

const Step* find_deep(const Step& step, std::string_view id) {
  if (step.id == id) return &step;
  for (const Step* child : child_steps(step)) {
    if (const Step* found = find_deep(*child, id)) return found;
  }
  return nullptr;
}

}  // namespace

base::Result<base::Json> evaluate_value(const Value& value, const EvalContext& context) {
  switch (value.kind) {
    case Value::Kind::kLiteral: return value.literal;
    case Value::Kind::kTemplate: {
      auto r = render(value.tmpl, context);
      if (!r.ok() && value.location.line > 0) {
        return r.status().with_context(std::to_string(value.location.line) + ":" + std::to_string(value.location.column));
      }
      return r;
    }
    case Value::Kind::kArray: {
      base::Json out = base::Json::array();
      for (const auto& item : value.items) {
        DLOOP_ASSIGN_OR_RETURN(base::Json v, evaluate_value(item, context));
        out.push_back(std::move(v));
      }
      return out;
    }
    case Value::Kind::kObject: {
      base::Json out = base::Json::object();
      for (const auto& [k, item] : value.members) {
        DLOOP_ASSIGN_OR_RETURN(base::Json v, evaluate_value(item, context));
        out.set(k, std::move(v));
      }
      return out;
    }
  }
  return base::internal_error("bad value kind");
}

const char* input_type_name(InputType type) {
  switch (type) {
    case InputType::kString: return "string";
    case InputType::kInteger: return "integer";
    case InputType::kNumber: return "number";
    case InputType::kBoolean: return "boolean";
    case InputType::kObject: return "object";
    case InputType::kArray: return "array";
  }
  return "string";
}

const char* error_kind_name(ErrorKind kind) { return kErrorKindNames[static_cast<int>(kind)]; }

std::optional<ErrorKind> parse_error_kind(std::string_view name) {
  for (int i = 0; i < 6; ++i) {
    if (name == kErrorKindNames[i]) return static_cast<ErrorKind>(i);
  }
  return std::nullopt;
}

const char* step_kind_name(const StepKind& kind) {
  static const char* const names[] = {"agent", "tool", "if", "for_each", "repeat_until", "parallel", "set"};
  return names[kind.index()];
}

std::vector<const Step*> child_steps(const Step& step) {
  std::vector<const Step*> out;
  auto add = [&](const std::vector<Step>& list) {
    for (const auto& s : list) out.push_back(&s);
  };
  if (const auto* s = std::get_if<IfStep>(&step.kind)) {
    add(s->then_steps);
    add(s->else_steps);
  } else if (const auto* f = std::get_if<ForEachStep>(&step.kind)) {
    add(f->steps);
  } else if (const auto* r = std::get_if<RepeatUntilStep>(&step.kind)) {
    add(r->steps);
  } else if (const auto* p = std::get_if<ParallelStep>(&step.kind)) {
    add(p->branches);
  }
  return out;
}

const Step* Workflow::find_step(std::string_view id) const {
  for (const auto& s : steps) {
    if (const Step* found = find_deep(s, id)) return found;
  }
  return nullptr;
}

const ToolSpec* Workflow::find_tool(std::string_view name) const {
  for (const auto& t : tools) {
    if (!t.name.empty() && t.name == name) return &t;
  }
  return nullptr;
}

const InputSpec* Workflow::find_input(std::string_view name) const {
  for (const auto& in : inputs) {
    if (in.name == name) return &in;
  }
  return nullptr;
}

}  // namespace dloop::workflows
