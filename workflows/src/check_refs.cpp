// Checks what every expression reads, once the whole file is loaded: `inputs.X` must be a
// declared input, `steps.X` a step that has finished at that point (with `output`, `status` or
// `error` after it, and a known output key where the step's output shape is known), `run.X` a
// run field, `env.X` a variable listed under `env:`, and any other name a loop variable in scope.
// Each problem is reported at the column of the offending path segment.
#include <algorithm>

#include "dloop/base/strings.h"
#include "loader.h"

namespace dloop::workflows::detail {
namespace {

const std::vector<std::string> kRunFields = {"id", "workflow", "started_at"};
const std::vector<std::string> kStepFields = {"output", "status", "error"};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string suggest(const std::string& word, const std::vector<std::string>& candidates) {
  auto close = closest_name(word, candidates);
  return close ? " (did you mean '" + *close + "'?)" : "";
}

}  // namespace

void Loader::check_reads() {
  for (const auto& site : reads_) check_read(site);
}

void Loader::check_read(const ReadSite& site) {
  const Scope& scope = scopes_[site.scope_index];
  const auto& seg = site.path.segments;
  const std::string& root = seg[0];
  if (contains(scope.loop_vars, root)) return;
  if (root == "inputs") {
    if (seg.size() < 2 || workflow_.find_input(seg[1])) return;
    std::vector<std::string> names;
    for (const auto& in : workflow_.inputs) names.push_back(in.name);
    std::string msg = "unknown input '" + seg[1] + "'";
    msg += names.empty() ? " (the workflow declares no inputs)" : suggest(seg[1], names);
    issues_.error(site.locations[1], msg);
  } else if (root == "run") {
    if (seg.size() >= 2 && !contains(kRunFields, seg[1])) {
      issues_.error(site.locations[1], "unknown run field '" + seg[1] + "'" + suggest(seg[1], kRunFields) +
                                           "; fields: id, workflow, started_at");
    }
  } else if (root == "env") {
    if (workflow_.env.empty()) {
      issues_.error(site.locations[0], "env is not available: list the variables expressions may read under the "
                                       "top-level 'env:' key");
    } else if (seg.size() >= 2 && !contains(workflow_.env, seg[1])) {
      issues_.error(site.locations[1], "environment variable '" + seg[1] + "' is not listed under 'env:'" +
                                           suggest(seg[1], workflow_.env));
    }
  } else if (root == "steps") {
    if (!scope.steps_allowed) {
      issues_.error(site.locations[0], "step outputs are not available here (tools and inputs are set up before "
                                       "the first step)");
    } else {
      check_step_read(site, scope);
    }
  } else {
    std::vector<std::string> names = {"inputs", "run"};
    if (scope.steps_allowed) names.push_back("steps");
    if (!workflow_.env.empty()) names.push_back("env");
    names.insert(names.end(), scope.loop_vars.begin(), scope.loop_vars.end());
    std::string msg = "unknown name '" + root + "'";
    if (root == "item" || root == "index") {
      msg += " (loop variables exist only inside for_each and repeat_until steps)";
    } else if (root.find('-') != std::string::npos) {
      msg += " (names may contain '-'; there is no subtraction)";
    } else {
      msg += suggest(root, names);
    }
    issues_.error(site.locations[0], msg);
  }
}

void Loader::check_step_read(const ReadSite& site, const Scope& scope) {
  const auto& seg = site.path.segments;
  if (seg.size() < 2) return;
  const std::string& id = seg[1];
  auto it = steps_.find(id);
  if (it == steps_.end()) {
    std::vector<std::string> ids;
    for (const auto& [name, info] : steps_) ids.push_back(name);
    issues_.error(site.locations[1], "unknown step '" + id + "'" + suggest(id, ids));
    return;
  }
  if (contains(scope.enclosing, id) || !contains(scope.visible_steps, id)) {
    issues_.error(site.locations[1], unavailable_reason(id, scope));
    return;
  }
  if (seg.size() < 3) return;
  if (!contains(kStepFields, seg[2])) {
    issues_.error(site.locations[2], "unknown step field '" + seg[2] + "'" + suggest(seg[2], kStepFields) +
                                         "; a step has output, status and error");
    return;
  }
  const auto& keys = it->second.output_keys;
  if (seg[2] != "output" || seg.size() < 4 || !keys || contains(*keys, seg[3])) return;
  issues_.error(site.locations[3], "the output of step '" + id + "' has no key '" + seg[3] + "'" + suggest(seg[3], *keys));
}

std::string Loader::unavailable_reason(const std::string& id, const Scope& scope) const {
  if (!scope.enclosing.empty() && scope.enclosing.back() == id) {
    return "step '" + id + "' cannot read its own output";
  }
  if (contains(scope.enclosing, id)) {
    return "steps." + id + " is not available inside step '" + id + "', which has not finished yet";
  }
  for (const auto& loop : steps_.at(id).loops) {
    if (!contains(scope.enclosing, loop)) {
      return "step '" + id + "' is inside the loop '" + loop + "' and cannot be read outside it (read steps." + loop +
             ".output instead)";
    }
  }
  return "step '" + id + "' has not run at this point (it comes later, or in another branch)";
}

}  // namespace dloop::workflows::detail
