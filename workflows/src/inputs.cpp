// Binding a run's inputs to a workflow's declared inputs: defaults, required inputs, unknown
// names, types and enums; and the conversion of command-line text to a typed input value.
// Thread-safe: pure functions.
#include <charconv>
#include <cstdlib>

#include "dloop/base/strings.h"
#include "expr_ast.h"
#include "loader.h"

namespace dloop::workflows {
namespace detail {

bool matches_input_type(InputType type, const base::Json& value) {
  switch (type) {
    case InputType::kString: return value.is_string();
    case InputType::kInteger: return value.is_int() || (value.is_double() && value.as_double() == static_cast<double>(static_cast<int64_t>(value.as_double())));
    case InputType::kNumber: return value.is_number();
    case InputType::kBoolean: return value.is_bool();
    case InputType::kObject: return value.is_object();
    case InputType::kArray: return value.is_array();
  }
  return false;
}

const char* input_type_phrase(InputType type) {
  switch (type) {
    case InputType::kString: return "a string";
    case InputType::kInteger: return "an integer";
    case InputType::kNumber: return "a number";
    case InputType::kBoolean: return "a boolean";
    case InputType::kObject: return "an object";
    case InputType::kArray: return "a list";
  }
  return "a value";
}

bool json_in(const std::vector<base::Json>& values, const base::Json& value) {
  for (const auto& v : values) {
    if (json_equal(v, value)) return true;
  }
  return false;
}

}  // namespace detail

base::Result<base::Json> resolve_inputs(const Workflow& workflow, const base::Json& given) {
  if (!given.is_object() && !given.is_null()) return base::invalid_argument("inputs must be a JSON object");
  if (given.is_object()) {
    std::vector<std::string> names;
    for (const auto& in : workflow.inputs) names.push_back(in.name);
    for (const auto& [name, value] : given.as_object()) {
      if (workflow.find_input(name)) continue;
      std::string msg = "unknown input '" + name + "'";
      if (auto close = detail::closest_name(name, names)) msg += " (did you mean '" + *close + "'?)";
      else if (names.empty()) msg += " (the workflow declares no inputs)";
      return base::invalid_argument(msg);
    }
  }
  base::Json out = base::Json::object();
  for (const auto& in : workflow.inputs) {
    const base::Json* v = given.is_object() ? given.find(in.name) : nullptr;
    if (!v) {
      if (in.default_value) { out.set(in.name, *in.default_value); continue; }
      if (in.required) return base::invalid_argument("missing required input '" + in.name + "'");
      out.set(in.name, base::Json());
      continue;
    }
    if (!detail::matches_input_type(in.type, *v)) {
      return base::invalid_argument("input '" + in.name + "' must be " + detail::input_type_phrase(in.type) + ", got " +
                                    detail::json_type_phrase(*v));
    }
    if (!in.enum_values.empty() && !detail::json_in(in.enum_values, *v)) {
      std::string allowed;
      for (const auto& e : in.enum_values) allowed += (allowed.empty() ? "" : ", ") + e.dump();
      return base::invalid_argument("input '" + in.name + "' must be one of " + allowed + ", got " + v->dump());
    }
    out.set(in.name, *v);
  }
  return out;
}

base::Result<base::Json> parse_input_text(const InputSpec& input, std::string_view text) {
  const std::string where = "input '" + input.name + "'";
  switch (input.type) {
    case InputType::kString: return base::Json(text);
    case InputType::kBoolean:
      if (text == "true") return base::Json(true);
      if (text == "false") return base::Json(false);
      return base::invalid_argument(where + " must be true or false, got '" + std::string(text) + "'");
    case InputType::kInteger: {
      int64_t v = 0;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || p != text.data() + text.size() || text.empty()) {
        return base::invalid_argument(where + " must be an integer, got '" + std::string(text) + "'");
      }
      return base::Json(v);
    }
    case InputType::kNumber: {
      auto parsed = base::Json::parse(text);
      if (!parsed.ok() || !parsed->is_number()) {
        return base::invalid_argument(where + " must be a number, got '" + std::string(text) + "'");
      }
      return parsed;
    }
    case InputType::kObject:
    case InputType::kArray: {
      auto parsed = base::Json::parse(text);
      if (!parsed.ok()) return base::invalid_argument(where + ": " + parsed.status().message());
      if (!detail::matches_input_type(input.type, *parsed)) {
        return base::invalid_argument(where + " must be " + detail::input_type_phrase(input.type));
      }
      return parsed;
    }
  }
  return base::invalid_argument(where + ": unknown type");
}

}  // namespace dloop::workflows
