// `dloop bench runtime`: the runtime's own cost per agent turn, everything except model compute
// and tool work, and the throughput of many concurrent runs in one process.
// A benchmark workflow (one agent step, T calculator calls, then an answer) is recorded once with
// scripted model outputs; every measured run then takes its model outputs from that recorded run
// through the real engine bridge (the engine-thread hop stays, the forward passes are gone) and
// runs the real calculator tool (microseconds). A turn is measured on the event loop from the
// previous turn's commit to this turn's commit: building the request, the engine round trip, tool
// argument validation and invocation, and the durable SQLite commit of model_call, tool_call and
// tool_result in one transaction. The baseline, measured in the same run on the same database,
// is a bare Store::commit of the same three events: the part of a turn that is SQLite's.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "args.h"
#include "commands.h"
#include "dloop/base/json.h"
#include "dloop/runtime/driver.h"
#include "dloop/tools/builtins.h"
#include "dloop/workflows/load.h"

namespace dloop::cli {
namespace {

using base::Json;
using Clock = std::chrono::steady_clock;
namespace et = memory::event_type;

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

std::string workflow_yaml(int64_t turns) {
  return "name: bench-runtime\n"
         "tools:\n"
         "  - use: calculator\n"
         "steps:\n"
         "  - id: work\n"
         "    agent:\n"
         "      prompt: \"Add one to the running total, one step at a time, then say done.\"\n"
         "      tools: [calculator]\n"
         "      max_turns: " +
         std::to_string(turns + 1) +
         "\n"
         "outputs: {answer: \"${{ steps.work.output }}\"}\n";
}

engine::ToolCallResult scripted(size_t turn, int64_t turns) {
  engine::ToolCallResult r;
  if (static_cast<int64_t>(turn) >= turns) {
    r.answer = "done";
    return r;
  }
  r.is_call = true;
  r.name = "calculator";
  r.arguments_json = Json::object();
  r.arguments_json.set("expression", std::to_string(turn) + " + 1");
  r.arguments = r.arguments_json.dump(Json::Style::kPython);
  r.prompt_tokens = 120 + 20 * static_cast<int64_t>(turn);
  r.completion_tokens = 12;
  r.forward_passes = 3;
  return r;
}

// The recorded model outputs of `run_id`, in turn order, as engine results.
base::Result<std::vector<engine::ToolCallResult>> recorded_outputs(memory::Store& store, const std::string& run_id) {
  DLOOP_ASSIGN_OR_RETURN(auto events, store.events(run_id));
  std::vector<engine::ToolCallResult> out;
  for (const auto& e : events) {
    if (e.type != et::kModelCall) continue;
    const Json* o = e.payload.find("output");
    engine::ToolCallResult r;
    if (o && o->find("type") && o->find("type")->as_string() == "call") {
      r.is_call = true;
      r.name = o->find("name")->as_string();
      r.arguments_json = *o->find("arguments");
      r.arguments = r.arguments_json.dump(Json::Style::kPython);
    } else {
      r.answer = o && o->find("text") ? o->find("text")->as_string() : "";
    }
    out.push_back(std::move(r));
  }
  if (out.empty()) return base::internal_error("the recorded run has no model calls");
  return out;
}

struct Phase {
  std::vector<double> turn_ms;  // every turn of every run
  int64_t completed = 0;
  int64_t errors = 0;
  double wall_ms = 0;
};

// Runs `runs` runs of the workflow `parallel` at a time against `store`, with `engine`.
Phase run_phase(std::shared_ptr<const workflows::Workflow> wf, const std::string& flow_path,
                std::shared_ptr<memory::Store> store, std::shared_ptr<runtime::EngineBridge> engine, int64_t runs,
                int parallel, const std::filesystem::path& dir) {
  Phase phase;
  std::mutex mu;  // on_event runs on the loop thread; the mutex keeps this honest if that changes
  std::map<std::string, Clock::time_point> last;  // run id -> previous step_started / turn commit
  std::vector<runtime::RunRequest> requests;
  for (int64_t i = 0; i < runs; ++i) {
    runtime::RunRequest r;
    r.workflow = wf;
    r.workflow_path = flow_path;
    r.workflow_hash = "sha256:bench";
    r.workspace = dir;
    r.on_event = [&](const memory::Event& e) {
      const auto now = Clock::now();
      std::lock_guard lock(mu);
      if (e.type == et::kStepStarted) {
        last[e.run_id] = now;
      } else if (e.type == et::kModelCall && e.turn > 0) {
        auto it = last.find(e.run_id);
        if (it != last.end()) phase.turn_ms.push_back(std::chrono::duration<double, std::milli>(now - it->second).count());
        last[e.run_id] = now;
      }
    };
    requests.push_back(std::move(r));
  }
  runtime::DriverOptions opts;
  opts.store = std::move(store);
  opts.engine = std::move(engine);
  opts.parallel = parallel;
  const auto t0 = Clock::now();
  auto result = runtime::run_workflows(std::move(requests), opts);
  phase.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  for (const auto& r : result.runs) {
    const Json* answer = r.outputs.find("answer");
    if (r.status.ok() && answer && answer->is_string() && answer->as_string() == "done") {
      ++phase.completed;
    } else {
      ++phase.errors;
    }
  }
  return phase;
}

// The bare durable commit of one turn's three events, `n` times, on `store` under run `run_id`.
std::vector<double> commit_baseline(memory::Store& store, const std::string& run_id, int64_t n) {
  std::vector<double> ms;
  for (int64_t i = 0; i < n; ++i) {
    memory::Batch batch(run_id);
    for (const char* type : {"model_call", "tool_call", "tool_result"}) {
      memory::NewEvent e;
      e.type = type;
      e.step_path = "baseline";
      e.attempt = 1;
      e.turn = i + 1;
      e.payload.set("output", Json::object());
      e.payload.set("note", std::string(400, 'x'));  // about a turn's payload size
      batch.append(std::move(e));
    }
    const auto t0 = Clock::now();
    auto r = store.commit(batch);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!r.ok()) break;
  }
  return ms;
}

}  // namespace

int bench_runtime(const std::vector<std::string>& args) {
  ArgParser p("bench runtime", "[options]",
              "The runtime's own cost per agent turn with the model replayed from a recorded run (no model\n"
              "compute) and the calculator tool (microseconds), including the durable SQLite commit of each\n"
              "turn: median and p95, next to a bare commit of the same events on the same database. Then\n"
              "many runs at once in one process: throughput and errors.");
  p.flag({"runs", "N", "sequential runs measured per sync mode", false, "30"})
      .flag({"turns", "N", "tool-calling turns per run (then an answer)", false, "8"})
      .flag({"concurrent", "N", "runs at once in the throughput phase", false, "100"})
      .flag({"dir", "DIR", "where the benchmark database and workflow are written", false, "/tmp/dloop-bench-runtime"})
      .flag({"json", "", "print JSON instead of a table"});
  auto a = p.parse(args, 0, 0);
  if (p.help_requested()) {
    std::fputs(p.usage().c_str(), stdout);
    return kExitOk;
  }
  auto usage_error = [](const base::Status& s) {
    std::fprintf(stderr, "dloop bench runtime: %s\n", s.message().c_str());
    return kExitUsage;
  };
  if (!a.ok()) return usage_error(a.status());
  auto runs = a->get_int("runs", 30, 1, 100000);
  auto turns = a->get_int("turns", 8, 1, 1000);
  auto concurrent = a->get_int("concurrent", 100, 1, 10000);
  for (const auto* r : {&runs, &turns, &concurrent}) {
    if (!r->ok()) return usage_error(r->status());
  }
  const std::filesystem::path dir = a->get("dir").value_or("/tmp/dloop-bench-runtime");
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) return usage_error(base::io_error("cannot create '" + dir.string() + "': " + ec.message()));
  const std::string flow_path = (dir / "bench.yaml").string();
  std::ofstream(flow_path) << workflow_yaml(*turns);
  workflows::LoadOptions lo;
  lo.builtin_tools = tools::builtin_names();
  auto loaded = workflows::load_string(workflow_yaml(*turns), flow_path, lo);
  if (!loaded.ok()) return usage_error(loaded.status());
  auto wf = std::make_shared<const workflows::Workflow>(std::move(loaded).value());

  Json results = Json::object();
  std::vector<std::pair<std::string, memory::StoreOptions::Sync>> modes = {{"full", memory::StoreOptions::Sync::kFull},
                                                                           {"normal", memory::StoreOptions::Sync::kNormal}};
  std::vector<engine::ToolCallResult> outputs;
  std::string recorded_id;
  Json per_mode = Json::array();
  for (const auto& [name, sync] : modes) {
    memory::StoreOptions so;
    so.sync = sync;
    auto opened = memory::Store::open((dir / ("bench-" + name + ".db")).string(), so);
    if (!opened.ok()) return usage_error(opened.status());
    std::shared_ptr<memory::Store> store = std::move(opened).value();
    if (outputs.empty()) {
      // Record the run whose model outputs every measured run replays.
      const int64_t t = *turns;
      auto recorder = std::make_shared<runtime::EngineBridge>([t](const engine::ToolCallRequest& req) {
        return base::Result<engine::ToolCallResult>(scripted((req.messages.size() - 1) / 2, t));
      });
      Phase rec = run_phase(wf, flow_path, store, recorder, 1, 1, dir);
      auto list = store->list_runs();
      if (rec.errors > 0 || !list.ok() || list->empty()) {
        std::fprintf(stderr, "dloop bench runtime: recording the benchmark run failed\n");
        return kExitFailed;
      }
      recorded_id = list->front().id;
      auto got = recorded_outputs(*store, recorded_id);
      if (!got.ok()) return usage_error(got.status());
      outputs = std::move(got).value();
    }
    auto replayer = std::make_shared<runtime::EngineBridge>([outputs](const engine::ToolCallRequest& req) {
      const size_t turn = (req.messages.size() - 1) / 2;  // the prompt, then (call, result) per turn
      if (turn >= outputs.size()) return base::Result<engine::ToolCallResult>(base::out_of_range("no recorded turn"));
      return base::Result<engine::ToolCallResult>(outputs[turn]);
    });
    Phase seq = run_phase(wf, flow_path, store, replayer, *runs, 1, dir);
    memory::NewRun baseline_run;
    baseline_run.workflow = "bench-baseline";
    auto base_id = store->create_run(baseline_run);
    if (!base_id.ok()) return usage_error(base_id.status());
    std::vector<double> commit = commit_baseline(*store, *base_id, std::max<int64_t>(50, *runs));
    Json m = Json::object();
    m.set("sync", name);
    m.set("runs", *runs);
    m.set("turns", static_cast<int64_t>(seq.turn_ms.size()));
    m.set("errors", seq.errors);
    m.set("turn_median_ms", percentile(seq.turn_ms, 0.5));
    m.set("turn_p95_ms", percentile(seq.turn_ms, 0.95));
    m.set("commit_median_ms", percentile(commit, 0.5));
    m.set("commit_p95_ms", percentile(commit, 0.95));
    m.set("runtime_excluding_commit_median_ms", percentile(seq.turn_ms, 0.5) - percentile(commit, 0.5));
    {
      Phase conc = run_phase(wf, flow_path, store, replayer, *concurrent, static_cast<int>(*concurrent), dir);
      Json c = Json::object();
      c.set("runs", *concurrent);
      c.set("completed", conc.completed);
      c.set("errors", conc.errors);
      c.set("turns", static_cast<int64_t>(conc.turn_ms.size()));
      c.set("wall_ms", conc.wall_ms);
      c.set("runs_per_s", 1000.0 * static_cast<double>(conc.completed) / conc.wall_ms);
      c.set("turns_per_s", 1000.0 * static_cast<double>(conc.turn_ms.size()) / conc.wall_ms);
      c.set("turn_median_ms", percentile(conc.turn_ms, 0.5));
      c.set("integrity", store->check_integrity().ok());
      m.set("concurrent", std::move(c));
    }
    per_mode.push_back(std::move(m));
  }
  results.set("recorded_run", recorded_id);
  results.set("per_turn", std::move(per_mode));
  if (a->has("json")) {
    std::printf("%s\n", results.dump(Json::Style::kPretty).c_str());
    return kExitOk;
  }
  std::printf("runtime cost per agent turn: model outputs replayed from recorded run %s, calculator tool,\n"
              "%lld runs x %lld turns per sync mode, database in %s\n\n",
              recorded_id.c_str(), static_cast<long long>(*runs), static_cast<long long>(*turns), dir.c_str());
  std::printf("%-8s %7s %7s %12s %10s %16s %14s %18s\n", "sync", "turns", "errors", "turn median", "turn p95",
              "commit median", "commit p95", "turn - commit");
  for (const Json& m : results.find("per_turn")->as_array()) {
    std::printf("%-8s %7lld %7lld %9.3f ms %7.3f ms %13.3f ms %11.3f ms %15.3f ms\n", m.find("sync")->as_string().c_str(),
                static_cast<long long>(m.find("turns")->as_int()), static_cast<long long>(m.find("errors")->as_int()),
                m.find("turn_median_ms")->as_double(), m.find("turn_p95_ms")->as_double(),
                m.find("commit_median_ms")->as_double(), m.find("commit_p95_ms")->as_double(),
                m.find("runtime_excluding_commit_median_ms")->as_double());
  }
  std::printf("\n");
  int64_t errors = 0;
  for (const Json& m : results.find("per_turn")->as_array()) {
    const Json& c = *m.find("concurrent");
    errors += c.find("errors")->as_int() + m.find("errors")->as_int();
    std::printf("%lld concurrent runs in one process (sync %s): %lld completed, %lld errors, %lld turns in %.1f ms: "
                "%.1f runs/s, %.1f turns/s; integrity_check %s\n",
                static_cast<long long>(c.find("runs")->as_int()), m.find("sync")->as_string().c_str(),
                static_cast<long long>(c.find("completed")->as_int()), static_cast<long long>(c.find("errors")->as_int()),
                static_cast<long long>(c.find("turns")->as_int()), c.find("wall_ms")->as_double(),
                c.find("runs_per_s")->as_double(), c.find("turns_per_s")->as_double(),
                c.find("integrity")->as_bool() ? "ok" : "FAILED");
  }
  return errors == 0 ? kExitOk : kExitFailed;
}

}  // namespace dloop::cli
