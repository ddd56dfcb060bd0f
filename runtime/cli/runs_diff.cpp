// `dloop runs diff A B`: two runs (ids in the database or JSONL trace files) side by side, step by
// step: each step's outcome and attempts, each agent turn's model output, each tool call, and the
// run outputs, with the rows that differ marked. Exit 0 when the runs took the same path to the
// same outputs, 1 when they differ, 2 for bad usage or input. Read-only.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "dloop/base/json.h"
#include "recorded_run.h"

namespace dloop::cli {
namespace {

using base::Json;
namespace et = memory::event_type;

struct StepView {
  std::string status = "started";
  int64_t attempts = 0;
  Json output;
  std::string error;
  std::vector<std::string> rows;  // "turn 1: call x {...}", "tool x {...} -> {...}"
};

struct RunView {
  std::vector<std::string> order;  // step paths in first-seen order
  std::map<std::string, StepView> steps;
  std::string status;
  Json outputs;
};

std::string compact(const Json* j) { return j ? j->dump(Json::Style::kPython) : "null"; }

RunView view_of(const RecordedRun& r) {
  RunView v;
  v.status = memory::run_status_name(r.run.status);
  v.outputs = r.run.outputs;
  std::map<std::string, std::string> pending_calls;  // tool call id -> row prefix
  for (const auto& e : r.events) {
    if (e.step_path.empty()) continue;
    auto [it, fresh] = v.steps.try_emplace(e.step_path);
    if (fresh) v.order.push_back(e.step_path);
    StepView& s = it->second;
    s.attempts = std::max(s.attempts, e.attempt);
    const std::string at = s.attempts > 1 || e.attempt > 1 ? "attempt " + std::to_string(e.attempt) + " " : "";
    if (e.type == et::kStepCompleted) {
      s.status = "completed";
      s.output = e.payload.find("output") ? *e.payload.find("output") : Json();
    } else if (e.type == et::kStepFailed) {
      s.status = "failed";
      const Json* err = e.payload.find("error");
      const Json* msg = err ? err->find("message") : nullptr;
      s.error = msg && msg->is_string() ? msg->as_string() : compact(err);
    } else if (e.type == et::kStepSkipped) {
      s.status = "skipped";
    } else if (e.type == et::kModelCall) {
      const Json* o = e.payload.find("output");
      const Json* type = o ? o->find("type") : nullptr;
      std::string what;
      if (type && type->is_string() && type->as_string() == "call") {
        what = "call " + compact(o->find("name")) + " " + compact(o->find("arguments"));
      } else {
        what = "answer " + compact(o ? o->find("text") : nullptr);
      }
      s.rows.push_back(at + "turn " + std::to_string(e.turn) + ": " + what);
    } else if (e.type == et::kToolResult) {
      const Json* res = e.payload.find("result");
      std::string what = "tool " + compact(e.payload.find("name")) + " -> " +
                         (res ? compact(res) : "error " + compact(e.payload.find("error")));
      s.rows.push_back(at + (e.turn > 0 ? "turn " + std::to_string(e.turn) + " " : std::string()) + what);
    }
  }
  return v;
}

std::string fit(std::string s, size_t width) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (s.size() > width) s = s.substr(0, width - 3) + "...";
  s.append(width - s.size(), ' ');
  return s;
}

std::string step_summary(const StepView* s) {
  if (!s) return "(not run)";
  std::string out = s->status;
  if (s->attempts > 1) out += " after " + std::to_string(s->attempts) + " attempts";
  if (s->status == "completed") out += ": " + s->output.dump(Json::Style::kPython);
  if (s->status == "failed") out += ": " + s->error;
  return out;
}

}  // namespace

int runs_diff(const std::vector<std::string>& args) {
  ArgParser p("runs diff", "A B [--db PATH] [--width N]",
              "Show two runs side by side, step by step: each step's outcome, each agent turn's model output\n"
              "and each tool result, then the run outputs; '*' marks the rows that differ. A and B are run ids\n"
              "in the database or JSONL trace files. Exit 0 when the runs are the same, 1 when they differ.");
  p.flag({"db", "PATH", "state database", false, "$DLOOP_DB or ./dloop.db"})
      .flag({"width", "N", "width of each column", false, "48"});
  auto parsed = p.parse(args, 2, 2);
  if (p.help_requested()) {
    std::fputs(p.usage().c_str(), stdout);
    return kExitOk;
  }
  if (!parsed.ok()) {
    std::fprintf(stderr, "dloop runs diff: %s\n(see 'dloop runs diff --help')\n", parsed.status().message().c_str());
    return kExitUsage;
  }
  auto width = parsed->get_int("width", 48, 16, 1000);
  if (!width.ok()) {
    std::fprintf(stderr, "dloop runs diff: %s\n", width.status().message().c_str());
    return kExitUsage;
  }
  const std::string db = parsed->get("db").value_or(memory::default_db_path());
  auto a = load_recorded(parsed->positional()[0], db);
  auto b = a.ok() ? load_recorded(parsed->positional()[1], db) : a;
  for (const auto* r : {&a, &b}) {
    if (!r->ok()) {
      std::fprintf(stderr, "dloop runs diff: %s\n", r->status().message().c_str());
      return kExitUsage;
    }
  }
  const RunView va = view_of(*a), vb = view_of(*b);
  const size_t w = static_cast<size_t>(*width);
  bool differ = false;
  auto line = [&](const std::string& label, const std::string& left, const std::string& right) {
    const bool d = left != right;
    differ = differ || d;
    std::printf("%s %s%s %s\n", d ? "*" : " ", fit(label, 18).c_str(), fit(left, w).c_str(), right.c_str());
  };
  std::printf("  %s%s %s\n", fit("", 18).c_str(),
              fit("A: " + a->run.id + " (" + a->run.workflow + ")", w).c_str(),
              ("B: " + b->run.id + " (" + b->run.workflow + ")").c_str());
  std::vector<std::string> order = va.order;
  for (const auto& s : vb.order) {
    if (!va.steps.count(s)) order.push_back(s);
  }
  for (const auto& path : order) {
    auto ia = va.steps.find(path), ib = vb.steps.find(path);
    const StepView* sa = ia == va.steps.end() ? nullptr : &ia->second;
    const StepView* sb = ib == vb.steps.end() ? nullptr : &ib->second;
    line(path, step_summary(sa), step_summary(sb));
    const size_t rows = std::max(sa ? sa->rows.size() : 0, sb ? sb->rows.size() : 0);
    for (size_t i = 0; i < rows; ++i) {
      line("", sa && i < sa->rows.size() ? "  " + sa->rows[i] : "", sb && i < sb->rows.size() ? "  " + sb->rows[i] : "");
    }
  }
  line("run status", va.status, vb.status);
  line("outputs", va.outputs.dump(Json::Style::kPython), vb.outputs.dump(Json::Style::kPython));
  std::printf("%s\n", differ ? "the runs differ (rows marked *)" : "the runs are the same");
  return differ ? kExitFailed : kExitOk;
}

}  // namespace dloop::cli
