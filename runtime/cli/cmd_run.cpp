// `dloop run FLOW.yaml [--input k=v ...]`: validates the workflow (errors as `dloop validate`
// prints them, exit 2), creates a run in the state database, executes it on the runtime's event
// loop, prints the run id to stderr and the outputs JSON to stdout. Exit 0 on success, 1 when the
// run failed, 2 for bad usage or input, 130 when interrupted (the run stays resumable).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <fstream>
#include <sstream>
#include <string>

#include "args.h"
#include "commands.h"
#include "dloop/base/json.h"
#include "dloop/memory/store.h"
#include "dloop/runtime/driver.h"
#include "dloop/runtime/trace.h"
#include "dloop/tools/builtins.h"
#include "dloop/workflows/load.h"
#include "model_path.h"

namespace dloop::cli {
namespace {

ArgParser run_parser() {
  ArgParser p("run", "FLOW.yaml [--input NAME=VALUE ...] [options]",
              "Run a workflow file. The run's events go to the state database; the outputs are printed\n"
              "as JSON on stdout and the run id on stderr. Exit status: 0 completed, 1 the run failed,\n"
              "2 bad usage or invalid workflow/inputs, 130 interrupted (resume with 'dloop resume RUN_ID').");
  p.flag({"input", "NAME=VALUE", "an input value (typed by the workflow's inputs)", true})
      .flag({"inputs-json", "JSON", "a whole input set as a JSON object; repeat for several runs", true})
      .flag({"parallel", "N", "runs executed at once when several input sets are given", false, "1"})
      .flag({"db", "PATH", "state database", false, "$DLOOP_DB or ./dloop.db"})
      .flag({"model", "FILE", "GGUF model for agent steps (overrides the workflow's model:)", false,
             "the workflow's model"})
      .flag({"device", "DEV", "where the model's forward passes run: cpu, or cuda (a CUDA build with a GPU)", false,
             "the workflow's device:, else cpu"})
      .flag({"workspace", "DIR", "root of file tools and tool processes", false, "the current directory"})
      .flag({"json-events", "", "print each event as one JSON line on stderr as it is committed"});
  return p;
}

bool has_agent(const std::vector<workflows::Step>& steps) {
  for (const auto& s : steps) {
    if (std::holds_alternative<workflows::AgentStep>(s.kind)) return true;
    for (const auto* c : workflows::child_steps(s)) {
      if (std::holds_alternative<workflows::AgentStep>(c->kind)) return true;
      if (has_agent(std::vector<workflows::Step>{*c})) return true;
    }
  }
  return false;
}

}  // namespace

// Shared with cmd_resume.cpp (Secrets: commands.h).
std::string read_file_text(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  *ok = static_cast<bool>(in) || in.eof();
  return ss.str();
}

base::Result<std::string> model_for(const workflows::Workflow& wf, const ParsedArgs& a, const std::string& flow_path) {
  if (!has_agent(wf.steps)) return std::string();
  if (auto m = a.get("model")) return resolve_model_path(*m);
  if (wf.model == "default" || wf.model.empty()) return resolve_model_path("default");
  std::filesystem::path p(wf.model);
  if (p.is_relative()) p = std::filesystem::path(flow_path).parent_path() / p;
  return resolve_model_path(p.string());
}

Secrets env_secrets(const workflows::Workflow& wf) {
  Secrets out;
  for (const auto& name : wf.secret_env) {
    const char* v = std::getenv(name.c_str());
    if (v != nullptr && *v != '\0') out.emplace_back(name, v);
  }
  return out;
}

int report_runs(const runtime::DriverResult& r, const std::string& db_path, const char* verb, const Secrets& secrets) {
  auto clean = [&secrets](const std::string& text) { return runtime::redact(base::Json(text), secrets).as_string(); };
  int code = kExitOk;
  for (const auto& run : r.runs) {
    if (!run.status.ok() && code == kExitOk) code = kExitFailed;
  }
  if (r.runs.size() == 1) {
    const auto& run = r.runs[0];
    if (run.status.ok()) std::printf("%s\n", run.outputs.dump(base::Json::Style::kPretty).c_str());
  } else {
    base::Json all = base::Json::array();
    for (const auto& run : r.runs) {
      base::Json j = base::Json::object();
      j.set("run_id", run.run_id);
      j.set("status", run.status.ok() ? "completed" : run.status.code() == base::Code::kCancelled ? "cancelled" : "failed");
      if (run.status.ok()) j.set("outputs", run.outputs);
      else j.set("error", clean(run.status.message()));
      all.push_back(std::move(j));
    }
    std::printf("%s\n", all.dump(base::Json::Style::kPretty).c_str());
  }
  for (const auto& run : r.runs) {
    if (run.status.ok()) continue;
    if (run.left_resumable) {
      // Not a failure of the run: another process holds it, or this one had to stop writing.
      std::fprintf(stderr, "dloop %s: %s\n", verb, run.status.message().c_str());
      if (!run.run_id.empty() && run.status.message().find("is being executed by") == std::string::npos) {
        std::fprintf(stderr, "dloop %s: run %s is still resumable: dloop resume %s --db %s\n", verb,
                     run.run_id.c_str(), run.run_id.c_str(), db_path.c_str());
      }
    } else if (run.status.code() == base::Code::kCancelled || r.interrupted) {
      if (!run.run_id.empty()) {
        std::fprintf(stderr, "dloop %s: run %s interrupted; continue it with: dloop resume %s --db %s\n", verb,
                     run.run_id.c_str(), run.run_id.c_str(), db_path.c_str());
      }
    } else {
      std::fprintf(stderr, "dloop %s: run %s failed: %s\n", verb, run.run_id.c_str(), clean(run.status.message()).c_str());
    }
  }
  if (r.interrupted) return 130;
  return code;
}

std::function<void(const memory::Event&)> event_printer(bool enabled, Secrets secrets) {
  if (!enabled) return {};
  // Lines are redacted like trace export; run_started (always the first line of a new run) also
  // names the secrets the run recorded.
  auto known = std::make_shared<Secrets>(std::move(secrets));
  return [known](const memory::Event& e) {
    if (e.type == memory::event_type::kRunStarted) {
      for (auto& s : runtime::run_secrets({e})) known->push_back(std::move(s));
    }
    std::fprintf(stderr, "%s\n", runtime::redact(memory::to_json(e), *known).dump().c_str());
    std::fflush(stderr);
  };
}

int cmd_run(const std::vector<std::string>& args) {
  ArgParser parser = run_parser();
  auto parsed = parser.parse(args, 1, 1);
  if (parser.help_requested()) {
    std::fputs(parser.usage().c_str(), stdout);
    return kExitOk;
  }
  auto usage = [](const std::string& msg) {
    std::fprintf(stderr, "dloop run: %s\n(see 'dloop run --help')\n", msg.c_str());
    return kExitUsage;
  };
  if (!parsed.ok()) return usage(parsed.status().message());
  const ParsedArgs& a = *parsed;
  const std::string flow = a.positional()[0];
  workflows::LoadOptions lo;
  lo.builtin_tools = tools::builtin_names();
  workflows::LoadResult loaded = workflows::parse_workflow_file(flow, lo);
  if (!loaded.workflow) {
    for (const auto& d : loaded.diagnostics) std::fprintf(stderr, "%s\n", d.to_string().c_str());
    std::fprintf(stderr, "%s: %zu error%s\n", flow.c_str(), loaded.diagnostics.size(),
                 loaded.diagnostics.size() == 1 ? "" : "s");
    return kExitUsage;
  }
  auto wf = std::make_shared<const workflows::Workflow>(std::move(*loaded.workflow));

  // Input sets: --inputs-json objects (one run each), each overlaid with the --input values.
  std::vector<base::Json> sets;
  for (const auto& text : a.all("inputs-json")) {
    auto j = base::Json::parse(text);
    if (!j.ok() || !j->is_object()) return usage("--inputs-json must be a JSON object: " + text);
    sets.push_back(std::move(j).value());
  }
  if (sets.empty()) sets.push_back(base::Json::object());
  for (const auto& kv : a.all("input")) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) return usage("--input needs NAME=VALUE, got '" + kv + "'");
    const std::string name = kv.substr(0, eq);
    const auto* spec = wf->find_input(name);
    if (!spec) return usage("unknown input '" + name + "' (the workflow declares no such input)");
    auto v = workflows::parse_input_text(*spec, kv.substr(eq + 1));
    if (!v.ok()) return usage("--input " + name + ": " + v.status().message());
    for (auto& s : sets) s.set(name, *v);
  }
  bool read_ok = false;
  const std::string text = read_file_text(flow, &read_ok);
  const std::string abs_flow = std::filesystem::absolute(flow).lexically_normal().string();
  auto model = model_for(*wf, a, flow);
  if (!model.ok()) return usage(model.status().message());
  auto device = resolve_device(a.get("device"), wf->device);
  if (!device.ok()) {
    if (device.status().code() == base::Code::kInvalidArgument) return usage(device.status().message());
    std::fprintf(stderr, "dloop run: %s\n", device.status().message().c_str());
    return kExitFailed;
  }
  auto parallel = a.get_int("parallel", 1, 1, 1024);
  if (!parallel.ok()) return usage(parallel.status().message());

  const std::string db_path = a.get("db").value_or(memory::default_db_path());
  auto store = memory::Store::open(db_path);
  if (!store.ok()) {
    std::fprintf(stderr, "dloop run: %s: %s\n", db_path.c_str(), store.status().message().c_str());
    return kExitFailed;
  }
  std::vector<runtime::RunRequest> requests;
  for (auto& s : sets) {
    auto inputs = workflows::resolve_inputs(*wf, s);
    if (!inputs.ok()) return usage(inputs.status().message());
    runtime::RunRequest r;
    r.workflow = wf;
    r.workflow_path = abs_flow;
    r.workflow_hash = runtime::sha256_hex(text);
    r.inputs = std::move(inputs).value();
    r.workspace = std::filesystem::absolute(a.get("workspace").value_or(".")).lexically_normal();
    r.on_event = event_printer(a.has("json-events"), env_secrets(*wf));
    r.on_run_id = [](const std::string& id) {
      std::fprintf(stderr, "run %s\n", id.c_str());
      std::fflush(stderr);
    };
    requests.push_back(std::move(r));
  }
  runtime::DriverOptions opts;
  opts.store = std::shared_ptr<memory::Store>(std::move(store).value());
  opts.model_path = *model;
  opts.device = *device;
  opts.parallel = static_cast<int>(*parallel);
  runtime::DriverResult result = runtime::run_workflows(std::move(requests), opts);
  return report_runs(result, db_path, "run", env_secrets(*wf));
}

}  // namespace dloop::cli
