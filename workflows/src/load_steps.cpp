// Steps: ids, the fields every step has (if, timeout, retry, continue_on_error), the choice of
// kind, and the control-flow kinds (if/then/else, for_each, repeat_until, parallel). Tracks the
// scope while it walks: which steps have finished before each point (for `steps.X` checks) and
// which loop variables exist. A step sees the steps before it in its list and before each
// enclosing step; steps inside then/else and parallel branches are visible after their parent;
// steps inside a loop body are visible only inside that body (and in `until`); a repeat_until
// body also sees its later steps (their output from the previous iteration).
#include <algorithm>

#include "dloop/base/strings.h"
#include "loader.h"

namespace dloop::workflows::detail {
namespace {

const std::vector<std::string> kStepKeys = {
    "id",    "description", "if",       "timeout",      "retry",        "continue_on_error", "agent",
    "tool",  "args",        "then",     "else",         "for_each",     "as",                "max_parallel",
    "steps", "repeat_until", "max_iterations", "parallel", "set"};
const std::vector<std::string> kKindKeys = {"agent", "tool", "then", "for_each", "repeat_until", "parallel", "set"};
const std::vector<std::string> kRetryKeys = {"max_attempts", "backoff", "multiplier", "on"};
const std::vector<std::string> kErrorKinds = {"any", "timeout", "tool_error", "model_error", "invalid_output", "unavailable"};
const std::vector<std::string> kReservedNames = {"inputs", "steps", "run", "env", "index", "true", "false", "null",
                                                 "and", "or", "not"};

// Keys that only mean something with one kind of step.
struct KindKey {
  const char* key;
  const char* kinds[2];
  const char* phrase;
};
const KindKey kKindKeyTable[] = {
    {"args", {"tool", nullptr}, "tool steps"},
    {"else", {"then", nullptr}, "if steps (with 'then')"},
    {"as", {"for_each", nullptr}, "for_each steps"},
    {"max_parallel", {"for_each", nullptr}, "for_each steps"},
    {"max_iterations", {"repeat_until", nullptr}, "repeat_until steps"},
    {"steps", {"for_each", "repeat_until"}, "for_each and repeat_until steps"},
};

}  // namespace

std::vector<Step> Loader::load_steps(const YNode& node, const std::string& what, bool allow_empty) {
  std::vector<Step> out;
  if (!expect_list(node, what)) return out;
  if (node.items.empty() && !allow_empty) issues_.error(node.location, "'" + what + "' must list at least one step");
  for (const auto& item : node.items) {
    if (auto step = load_step(item)) out.push_back(std::move(*step));
  }
  return out;
}

std::optional<Step> Loader::load_step(const YNode& node) {
  if (!expect_map(node, "step")) return std::nullopt;
  Step step;
  step.location = node.location;
  const bool has_id = load_step_id(node, step);
  const std::string label = step.id.empty() ? std::string("step") : "step '" + step.id + "'";
  check_keys(node, kStepKeys, label);
  std::vector<std::string> kinds;
  for (const auto& k : kKindKeys) {
    if (find(node, k)) kinds.push_back(k);
  }
  if (kinds.empty()) {
    issues_.error(node.location, label + " needs one of: agent, tool, then (with if), for_each, repeat_until, parallel, set");
  } else if (kinds.size() > 1) {
    issues_.error(find(node, kinds[1])->location,
                  label + " has both '" + kinds[0] + "' and '" + kinds[1] + "'; a step does one thing");
  }
  const std::string kind = kinds.empty() ? "" : kinds[0];
  for (const auto& kk : kKindKeyTable) {
    const YNode* k = find(node, kk.key);
    if (!k || kinds.empty()) continue;
    if (kind == kk.kinds[0] || (kk.kinds[1] && kind == kk.kinds[1])) continue;
    for (const auto& [key, value] : node.members) {
      if (key.scalar == kk.key) issues_.error(key.location, std::string("'") + kk.key + "' only applies to " + kk.phrase);
    }
  }
  if (has_id) scope_.enclosing.push_back(step.id);
  scope_dirty_ = true;
  load_common(node, step);
  if (kinds.size() == 1) load_kind(node, kind, step);
  if (has_id) {
    scope_.enclosing.pop_back();
    scope_.visible_steps.push_back(step.id);
  }
  scope_dirty_ = true;
  return step;
}

bool Loader::load_step_id(const YNode& node, Step& step) {
  const YNode* id = find(node, "id");
  if (!id) {
    missing(node, "id", "step");
    return false;
  }
  auto s = read_string(id, "id");
  if (!s || !valid_name(*id, *s, "step id")) return false;
  auto [it, inserted] = steps_.emplace(*s, StepInfo{id->location, loop_stack_, std::nullopt});
  if (!inserted) {
    issues_.error(id->location, "duplicate step id '" + *s + "' (first at line " + std::to_string(it->second.location.line) + ")");
    return false;
  }
  step.id = *s;
  return true;
}

void Loader::load_common(const YNode& node, Step& step) {
  if (auto s = read_string(find(node, "description"), "description")) step.description = *s;
  if (const YNode* c = find(node, "if")) step.condition = to_condition(*c, "if");
  if (const YNode* t = find(node, "timeout")) {
    step.timeout_ms = read_duration(t, "timeout");
    if (step.timeout_ms && *step.timeout_ms <= 0) issues_.error(t->location, "'timeout' must be more than 0");
  }
  if (const YNode* r = find(node, "retry")) load_retry(*r, step);
  if (auto b = read_bool(find(node, "continue_on_error"), "continue_on_error")) step.continue_on_error = *b;
}

void Loader::load_retry(const YNode& node, Step& step) {
  if (!expect_map(node, "retry")) return;
  check_keys(node, kRetryKeys, "retry");
  RetryPolicy r;
  r.location = node.location;
  r.max_attempts = 3;
  if (auto n = read_int(find(node, "max_attempts"), "max_attempts", 1, 100)) r.max_attempts = static_cast<int>(*n);
  if (auto ms = read_duration(find(node, "backoff"), "backoff")) r.backoff_ms = *ms;
  if (auto m = read_number(find(node, "multiplier"), "multiplier", 1)) r.multiplier = *m;
  if (auto on = read_string_list(find(node, "on"), "on")) {
    r.on.clear();
    const YNode* list = find(node, "on");
    for (size_t i = 0; i < on->size(); ++i) {
      auto kind = parse_error_kind((*on)[i]);
      if (kind) { r.on.push_back(*kind); continue; }
      std::string msg = "unknown error kind '" + (*on)[i] + "'";
      if (auto close = closest_name((*on)[i], kErrorKinds)) msg += " (did you mean '" + *close + "'?)";
      issues_.error(list->items[i].location, msg + "; kinds: any, timeout, tool_error, model_error, invalid_output, unavailable");
    }
    if (on->empty()) issues_.error(list->location, "'on' must name at least one error kind");
  }
  step.retry = r;
}

void Loader::load_kind(const YNode& node, const std::string& kind, Step& step) {
  if (kind == "agent") load_agent(node, step);
  else if (kind == "tool") load_tool_step(node, step);
  else if (kind == "then") load_if(node, step);
  else if (kind == "for_each") load_for_each(node, step);
  else if (kind == "repeat_until") load_repeat_until(node, step);
  else if (kind == "parallel") load_parallel(node, step);
  else load_set(node, step);
}

void Loader::load_if(const YNode& node, Step& step) {
  IfStep s;
  if (!find(node, "if")) issues_.error(find(node, "then")->location, "'then' needs an 'if' condition on the same step");
  const std::vector<std::string> saved = scope_.visible_steps;
  s.then_steps = load_steps(*find(node, "then"), "then", false);
  std::vector<std::string> visible = scope_.visible_steps;
  scope_.visible_steps = saved;
  scope_dirty_ = true;
  if (const YNode* e = find(node, "else")) s.else_steps = load_steps(*e, "else", true);
  visible.insert(visible.end(), scope_.visible_steps.begin() + static_cast<long>(saved.size()), scope_.visible_steps.end());
  scope_.visible_steps = std::move(visible);
  scope_dirty_ = true;
  step.kind = std::move(s);
}

std::vector<Step> Loader::load_body(const YNode& node, const std::string& what, const std::string& id,
                                    const std::vector<std::string>& loop_vars) {
  for (const auto& v : loop_vars) scope_.loop_vars.push_back(v);
  loop_stack_.push_back(id);
  scope_dirty_ = true;
  std::vector<Step> body = load_steps(node, what, false);
  loop_stack_.pop_back();
  return body;
}

void Loader::load_for_each(const YNode& node, Step& step) {
  ForEachStep f;
  const YNode& items = *find(node, "for_each");
  if (items.is_seq()) {
    f.items = to_value(items);
  } else if (!items.is_string()) {
    type_error(items, "for_each", "a list or an expression");
  } else if (auto tmpl = to_condition(items, "for_each")) {
    f.items.kind = Value::Kind::kTemplate;
    f.items.tmpl = std::move(*tmpl);
    f.items.location = items.location;
  }
  if (const YNode* as = find(node, "as")) {
    if (auto s = read_string(as, "as"); s && valid_name(*as, *s, "loop variable")) {
      if (std::find(kReservedNames.begin(), kReservedNames.end(), *s) != kReservedNames.end()) {
        issues_.error(as->location, "'as' cannot be '" + *s + "': that name is taken");
      } else {
        f.as = *s;
      }
    }
  }
  if (auto n = read_int(find(node, "max_parallel"), "max_parallel", 1, 1024)) f.max_parallel = static_cast<int>(*n);
  const YNode* body = find(node, "steps");
  if (!body) {
    missing(node, "steps", "for_each step '" + step.id + "'");
  } else {
    const Scope saved = scope_;
    f.steps = load_body(*body, "steps", step.id, {f.as, "index"});
    scope_ = saved;
    scope_dirty_ = true;
  }
  step.kind = std::move(f);
}

void Loader::load_repeat_until(const YNode& node, Step& step) {
  RepeatUntilStep r;
  if (const YNode* cap = find(node, "max_iterations")) {
    if (auto n = read_int(cap, "max_iterations", 1, 100000)) r.max_iterations = static_cast<int>(*n);
  } else {
    issues_.error(node.location, "missing required key 'max_iterations' in repeat_until step '" + step.id +
                                     "' (a hard cap on the number of iterations)");
  }
  const Scope saved = scope_;
  if (const YNode* body = find(node, "steps")) {
    // A body step may read a later body step: its output from the previous iteration.
    if (body->is_seq()) {
      for (const auto& item : body->items) {
        const YNode* id = find(item, "id");
        if (id && id->is_string()) scope_.visible_steps.push_back(id->scalar);
      }
    }
    r.steps = load_body(*body, "steps", step.id, {"index"});
  } else {
    missing(node, "steps", "repeat_until step '" + step.id + "'");
    scope_.loop_vars.push_back("index");
    scope_dirty_ = true;
  }
  // `until` is checked after each iteration: the body's steps are visible to it.
  if (auto until = to_condition(*find(node, "repeat_until"), "repeat_until")) r.until = std::move(*until);
  scope_ = saved;
  scope_dirty_ = true;
  step.kind = std::move(r);
}

void Loader::load_parallel(const YNode& node, Step& step) {
  ParallelStep p;
  const YNode& list = *find(node, "parallel");
  if (!expect_list(list, "parallel")) return;
  if (list.items.empty()) issues_.error(list.location, "'parallel' must list at least one step");
  const std::vector<std::string> saved = scope_.visible_steps;
  std::vector<std::string> visible = saved;
  for (const auto& item : list.items) {
    scope_.visible_steps = saved;  // branches run concurrently: none sees another
    scope_dirty_ = true;
    if (auto branch = load_step(item)) p.branches.push_back(std::move(*branch));
    visible.insert(visible.end(), scope_.visible_steps.begin() + static_cast<long>(saved.size()), scope_.visible_steps.end());
  }
  scope_.visible_steps = std::move(visible);
  scope_dirty_ = true;
  step.kind = std::move(p);
}

}  // namespace dloop::workflows::detail
