// `dloop resume RUN_ID`: re-executes an interrupted run's workflow against its event log.
// Completed steps, recorded model outputs and recorded tool results are reused, never re-executed;
// the rest runs for real and the run finishes. Refuses when the workflow file changed since the
// run started (its sha256 is in the run). Exit codes as `dloop run`.
#include <cstdio>
#include <filesystem>
#include <string>

#include "args.h"
#include "commands.h"
#include "dloop/memory/store.h"
#include "dloop/runtime/driver.h"
#include "dloop/runtime/trace.h"
#include "dloop/tools/builtins.h"
#include "dloop/workflows/load.h"
#include "model_path.h"

namespace dloop::cli {

std::string read_file_text(const std::string& path, bool* ok);
base::Result<std::string> model_for(const workflows::Workflow& wf, const ParsedArgs& a, const std::string& flow_path);
int report_runs(const runtime::DriverResult& r, const std::string& db_path, const char* verb, const Secrets& secrets);
std::function<void(const memory::Event&)> event_printer(bool enabled, Secrets secrets);
Secrets env_secrets(const workflows::Workflow& wf);

int cmd_resume(const std::vector<std::string>& args) {
  ArgParser p("resume", "RUN_ID [options]",
              "Finish an interrupted run (killed, or cancelled with Ctrl-C): the workflow is re-executed\n"
              "against the run's event log; recorded tool results and model outputs are reused, never\n"
              "re-executed. Recorded step failures are reused too, so a failed run fails the same way.\n"
              "The workflow file must be unchanged since the run started. A run that another process is\n"
              "executing (its lease is live, see docs/state.md) is refused with exit status 1, naming the\n"
              "process and when its lease expires. Exit status otherwise as 'dloop run'.");
  p.flag({"db", "PATH", "state database", false, "$DLOOP_DB or ./dloop.db"})
      .flag({"model", "FILE", "GGUF model for agent steps that still have to run", false, "the workflow's model"})
      .flag({"device", "DEV", "where the model's forward passes run: cpu, or cuda (a CUDA build with a GPU)", false,
             "the workflow's device:, else cpu"})
      .flag({"workspace", "DIR", "root of file tools and tool processes", false, "the current directory"})
      .flag({"json-events", "", "print each event as one JSON line on stderr as it is committed"})
      .flag({"force", "", "take over an unexpired lease held by a process on another host (say that host is down);\n"
                          "a lease of a process of this host that is gone is taken without it, and a live\n"
                          "process on this host is never displaced"});
  auto parsed = p.parse(args, 1, 1);
  if (p.help_requested()) {
    std::fputs(p.usage().c_str(), stdout);
    return kExitOk;
  }
  auto usage = [](const std::string& msg) {
    std::fprintf(stderr, "dloop resume: %s\n", msg.c_str());
    return kExitUsage;
  };
  if (!parsed.ok()) return usage(parsed.status().message() + "\n(see 'dloop resume --help')");
  const ParsedArgs& a = *parsed;
  const std::string run_id = a.positional()[0];
  const std::string db_path = a.get("db").value_or(memory::default_db_path());
  memory::StoreOptions so;
  so.create_if_missing = false;
  auto store = memory::Store::open(db_path, so);
  if (!store.ok()) return usage(db_path + ": " + store.status().message());
  auto run = (*store)->get_run(run_id);
  if (!run.ok()) return usage(run.status().message());
  if (run->status == memory::RunStatus::kCompleted) {
    std::fprintf(stderr, "run %s already completed\n", run_id.c_str());
    std::printf("%s\n", run->outputs.dump(base::Json::Style::kPretty).c_str());
    return kExitOk;
  }
  bool read_ok = false;
  const std::string text = read_file_text(run->workflow_path, &read_ok);
  if (!read_ok || !std::filesystem::exists(run->workflow_path)) {
    return usage("cannot read the run's workflow file '" + run->workflow_path + "'");
  }
  const std::string hash = runtime::sha256_hex(text);
  if (hash != run->workflow_hash) {
    return usage("the workflow file '" + run->workflow_path + "' changed since run " + run_id + " started (" +
                 run->workflow_hash + " then, " + hash + " now); resume only continues the exact workflow it "
                 "started (restore the file, or start a new run)");
  }
  workflows::LoadOptions lo;
  lo.builtin_tools = tools::builtin_names();
  auto wf = workflows::load_string(text, run->workflow_path, lo);
  if (!wf.ok()) return usage(wf.status().message());
  auto shared_wf = std::make_shared<const workflows::Workflow>(std::move(wf).value());
  auto model = model_for(*shared_wf, a, run->workflow_path);
  if (!model.ok()) return usage(model.status().message());
  auto device = resolve_device(a.get("device"), shared_wf->device);
  if (!device.ok()) {
    if (device.status().code() == base::Code::kInvalidArgument) return usage(device.status().message());
    std::fprintf(stderr, "dloop resume: %s\n", device.status().message().c_str());
    return kExitFailed;
  }

  // Secrets to keep out of the output: those the run recorded and those this process passes on.
  Secrets secrets = env_secrets(*shared_wf);
  if (auto first = (*store)->events(run_id, 0, 1); first.ok()) {
    for (auto& s : runtime::run_secrets(*first)) secrets.push_back(std::move(s));
  }
  runtime::RunRequest r;
  r.workflow = shared_wf;
  r.workflow_path = run->workflow_path;
  r.workflow_hash = run->workflow_hash;
  r.inputs = run->inputs;
  r.resume_run_id = run_id;
  r.force_lease = a.has("force");
  r.workspace = std::filesystem::absolute(a.get("workspace").value_or(".")).lexically_normal();
  r.on_event = event_printer(a.has("json-events"), secrets);
  r.on_run_id = [](const std::string& id) { std::fprintf(stderr, "resuming run %s\n", id.c_str()); };
  std::vector<runtime::RunRequest> requests;
  requests.push_back(std::move(r));
  runtime::DriverOptions opts;
  opts.store = std::shared_ptr<memory::Store>(std::move(store).value());
  opts.model_path = *model;
  opts.device = *device;
  runtime::DriverResult result = runtime::run_workflows(std::move(requests), opts);
  return report_runs(result, db_path, "resume", secrets);
}

}  // namespace dloop::cli
