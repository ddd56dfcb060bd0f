// `dloop replay RUN_ID|FILE`: re-executes the current workflow code against a recorded run (from
// the database or a JSONL trace) through the real executor, with model outputs and tool results
// served from the record: no model is loaded and no tool runs. Exit 0 with a one-line summary when
// the path is identical; exit 1 with a divergence report (step, attempt, turn, expected vs got) at
// the first difference. `--live-model` asks the model again instead (recorded tool results are
// reused where the call is identical) and lists, call by call, what changed and the time per call
// before and after. The re-execution writes into a private in-memory database; the record is never
// modified. Semantics: runtime/replay.h and docs/traces.md.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "dloop/engine/tool_call.h"
#include "dloop/runtime/driver.h"
#include "dloop/tools/builtins.h"
#include "dloop/workflows/load.h"
#include "recorded_run.h"

namespace dloop::cli {

base::Result<std::string> model_for(const workflows::Workflow& wf, const ParsedArgs& a, const std::string& flow_path);

namespace {

using base::Json;
namespace et = memory::event_type;

void set_reasoning(std::vector<workflows::Step>& steps, const std::string& level) {
  for (auto& step : steps) {
    if (auto* a = std::get_if<workflows::AgentStep>(&step.kind)) a->reasoning = level;
    if (auto* i = std::get_if<workflows::IfStep>(&step.kind)) {
      set_reasoning(i->then_steps, level);
      set_reasoning(i->else_steps, level);
    }
    if (auto* f = std::get_if<workflows::ForEachStep>(&step.kind)) set_reasoning(f->steps, level);
    if (auto* r = std::get_if<workflows::RepeatUntilStep>(&step.kind)) set_reasoning(r->steps, level);
    if (auto* p = std::get_if<workflows::ParallelStep>(&step.kind)) set_reasoning(p->branches, level);
  }
}

// The workflow file to re-execute: --workflow, else the recorded path; a relative recorded path
// that does not exist is also tried next to a trace file.
std::string workflow_file(const ParsedArgs& a, const RecordedRun& rec) {
  if (auto w = a.get("workflow")) return *w;
  std::filesystem::path p(rec.run.workflow_path);
  std::error_code ec;
  if (rec.from_file && p.is_relative() && !std::filesystem::exists(p, ec)) {
    auto beside = std::filesystem::path(rec.source).parent_path() / p.filename();
    if (std::filesystem::exists(beside, ec)) return beside.string();
  }
  return rec.run.workflow_path;
}

std::string describe_output(const Json& o) {
  if (o.is_null()) return "(none)";
  const Json* type = o.find("type");
  if (type && type->is_string() && type->as_string() == "call") {
    const Json* name = o.find("name");
    const Json* args = o.find("arguments");
    return "call " + (name && name->is_string() ? name->as_string() : std::string("?")) + " " +
           (args ? args->dump(Json::Style::kPython) : std::string("{}"));
  }
  const Json* text = o.find("text");
  return "answer " + (text ? text->dump() : std::string("\"\""));
}

std::string ms_text(double ms) {
  if (ms < 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", ms);
  return buf;
}

int report_live(const runtime::ReplayLog& log, const std::string& model, const RecordedRun& rec) {
  std::printf("live-model replay of run %s with %s\n", rec.run.id.c_str(), model.c_str());
  int changed = 0;
  double before = 0, after = 0;
  for (const auto& c : log.live_calls) {
    const bool same = c.same() && c.error.empty();
    if (!same) ++changed;
    if (c.recorded_ms > 0) before += c.recorded_ms;
    after += c.new_ms;
    std::printf("  step %s (attempt %lld, turn %lld): %s\n", c.step_path.c_str(), static_cast<long long>(c.attempt),
                static_cast<long long>(c.turn), same ? "same" : "changed");
    std::printf("    recorded: %s  [%s]\n", describe_output(c.recorded).c_str(), ms_text(c.recorded_ms).c_str());
    std::printf("    now:      %s  [%s]\n", c.error.empty() ? describe_output(c.got).c_str() : ("error: " + c.error).c_str(),
                ms_text(c.new_ms).c_str());
  }
  for (const auto& d : log.changes()) std::printf("  %s", d.report().c_str());
  std::printf("summary: %zu model calls, %d changed; model time %s recorded, %s now; %lld tool results reused, "
              "%lld tool calls ran live; %zu step or output differences\n",
              log.live_calls.size(), changed, ms_text(before).c_str(), ms_text(after).c_str(),
              static_cast<long long>(log.tool_results_served), static_cast<long long>(log.tools_run_live),
              log.changes().size());
  return changed == 0 && log.changes().empty() ? kExitOk : kExitFailed;
}

}  // namespace

int cmd_replay(const std::vector<std::string>& args) {
  ArgParser p("replay", "RUN_ID|FILE [options]",
              "Re-execute a recorded run (a run id in the database, or a JSONL trace file) with the current\n"
              "workflow code through the real executor. Model outputs and tool results come from the record:\n"
              "no model is loaded and no tool runs. Exit 0 with a one-line summary when the run takes the\n"
              "same path to the same outputs; exit 1 with a report naming the step, attempt, turn and what\n"
              "differs (expected vs got) at the first divergence.\n"
              "--live-model asks the model again (recorded tool results are reused where the call is the\n"
              "same; other calls run for real) and lists each model call's old and new output and time;\n"
              "exit 1 when anything changed. The re-execution is written to a private in-memory database.");
  p.flag({"db", "PATH", "state database holding RUN_ID", false, "$DLOOP_DB or ./dloop.db"})
      .flag({"workflow", "FILE", "the workflow file to re-execute", false, "the run's recorded path"})
      .flag({"live-model", "", "ask the model again instead of serving recorded outputs"})
      .flag({"model", "FILE", "with --live-model: the GGUF model to ask", false, "the workflow's model"})
      .flag({"reasoning", "LEVEL", "with --live-model: instant, low, medium or high for every agent step"})
      .flag({"workspace", "DIR", "with --live-model: root of tools that run for real", false, "the current directory"});
  auto parsed = p.parse(args, 1, 1);
  if (p.help_requested()) {
    std::fputs(p.usage().c_str(), stdout);
    return kExitOk;
  }
  auto usage = [](const std::string& msg) {
    std::fprintf(stderr, "dloop replay: %s\n", msg.c_str());
    return kExitUsage;
  };
  if (!parsed.ok()) return usage(parsed.status().message() + "\n(see 'dloop replay --help')");
  const ParsedArgs& a = *parsed;
  const bool live = a.has("live-model");
  if (!live && (a.has("model") || a.has("reasoning"))) return usage("--model and --reasoning need --live-model");
  if (auto r = a.get("reasoning"); r && !engine::parse_reasoning_effort(*r)) {
    return usage("--reasoning must be instant, low, medium or high, not '" + *r + "'");
  }
  auto rec = load_recorded(a.positional()[0], a.get("db").value_or(memory::default_db_path()));
  if (!rec.ok()) return usage(rec.status().message());

  const std::string flow = workflow_file(a, *rec);
  auto text = read_text_file(flow);
  if (!text.ok()) {
    return usage("cannot read the workflow file '" + flow + "' (" + text.status().message() +
                 "); give the current file with --workflow FILE");
  }
  workflows::LoadOptions lo;
  lo.builtin_tools = tools::builtin_names();
  auto wf = workflows::load_string(*text, flow, lo);
  if (!wf.ok()) return usage(wf.status().message());
  if (auto r = a.get("reasoning")) set_reasoning(wf->steps, *r);
  auto shared_wf = std::make_shared<const workflows::Workflow>(std::move(wf).value());
  const std::string hash = runtime::sha256_hex(*text);
  if (!rec->run.workflow_hash.empty() && hash != rec->run.workflow_hash) {
    std::fprintf(stderr, "note: %s changed since the run was recorded (%s then, %s now)\n", flow.c_str(),
                 rec->run.workflow_hash.c_str(), hash.c_str());
  }
  std::string model;
  if (live) {
    auto m = model_for(*shared_wf, a, flow);
    if (!m.ok()) return usage(m.status().message());
    model = *m;
  }

  auto scratch = memory::Store::open(":memory:");
  if (!scratch.ok()) return usage(scratch.status().message());
  auto log = std::make_shared<runtime::ReplayLog>(rec->run, rec->events,
                                                  live ? runtime::ReplayLog::Mode::kLiveModel
                                                       : runtime::ReplayLog::Mode::kStrict);
  runtime::RunRequest r;
  r.workflow = shared_wf;
  r.workflow_path = flow;
  r.workflow_hash = hash;
  r.inputs = rec->run.inputs;
  r.workspace = std::filesystem::absolute(a.get("workspace").value_or(".")).lexically_normal();
  r.replay = log;
  std::vector<runtime::RunRequest> requests;
  requests.push_back(std::move(r));
  runtime::DriverOptions opts;
  opts.store = std::shared_ptr<memory::Store>(std::move(scratch).value());
  opts.model_path = model;
  const auto t0 = std::chrono::steady_clock::now();
  runtime::DriverResult result = runtime::run_workflows(std::move(requests), opts);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (result.interrupted) return 130;
  if (live) return report_live(*log, model, *rec);
  if (const auto& d = log->divergence()) {
    std::printf("replay of run %s: diverged\n%s", rec->run.id.c_str(), d->report().c_str());
    return kExitFailed;
  }
  int64_t steps = 0;
  for (const auto& e : rec->events) {
    if (e.type == et::kStepStarted || e.type == et::kStepSkipped) ++steps;
  }
  const auto& outcome = result.runs.at(0);
  std::printf("replay of run %s: identical (%lld step attempts, %lld model outputs and %lld tool results from the "
              "record, run %s) in %s\n",
              rec->run.id.c_str(), static_cast<long long>(steps), static_cast<long long>(log->model_calls_served),
              static_cast<long long>(log->tool_results_served),
              outcome.status.ok() ? "completed" : memory::run_status_name(rec->run.status), ms_text(ms).c_str());
  return kExitOk;
}

}  // namespace dloop::cli
