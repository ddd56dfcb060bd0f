// `dloop serve`: the OpenAI-compatible sidecar and the workflow-runs API (runtime/server,
// docs/server.md). Prints "listening on http://HOST:PORT" on stderr once the socket is bound (with
// --port 0 that line names the port the kernel chose) and serves until SIGINT or SIGTERM, which
// finish in-flight completions and cancel runs resumably. Exit 0 after a clean shutdown, 1 when
// the model, database or address cannot be opened, 2 for bad usage.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "args.h"
#include "commands.h"
#include "dloop/memory/store.h"
#include "dloop/server/server.h"
#include "model_path.h"

namespace dloop::cli {
namespace {

ArgParser serve_parser() {
  ArgParser p("serve", "[options]",
              "Serve the OpenAI-compatible HTTP API (POST /v1/chat/completions, GET /v1/models) and the\n"
              "workflow-runs API (/v1/runs) on the in-process engine, plus /healthz and /metrics.\n"
              "Binds 127.0.0.1 by default; any other address needs --api-key (or DLOOP_API_KEY), which\n"
              "clients send as 'Authorization: Bearer KEY'. Requests from browsers of other sites are\n"
              "refused (Host and Origin checks, JSON-only bodies); workflows that run programs need\n"
              "--api-key or --allow-command-tools. SIGINT/SIGTERM shut down gracefully.\n"
              "docs/server.md describes every route and field.");
  p.flag({"host", "ADDR", "address to listen on", false, "127.0.0.1"})
      .flag({"port", "N", "TCP port; 0 picks a free one (printed on stderr)", false, "8080"})
      .flag({"model", "FILE", "GGUF model to serve", false, "the bundled model"})
      .flag({"device", "DEV", "where the model's forward passes run: cpu, or cuda (a CUDA build with a GPU)", false,
             "cpu"})
      .flag({"model-id", "ID", "the model id clients send", false, "the model file's stem"})
      .flag({"api-key", "KEY", "require 'Authorization: Bearer KEY' on /v1/* and /metrics", false, "$DLOOP_API_KEY"})
      .flag({"db", "PATH", "state database of the runs API", false, "$DLOOP_DB or ./dloop.db"})
      .flag({"workspace", "DIR", "root of file tools and processes of runs", false, "the current directory"})
      .flag({"workflows", "DIR", "POST /v1/runs may name workflow files under DIR (nothing outside it)", false,
             "none: only workflow_yaml"})
      .flag({"workflows-dir", "DIR", "the old spelling of --workflows", false, "none"})
      .flag({"allow-origin", "ORIGIN", "accept browser requests from this Origin (e.g. http://localhost:3000)", true,
             "none"})
      .flag({"allow-host", "NAME", "accept this Host name besides the bound address and localhost", true, "none"})
      .flag({"allow-command-tools", "", "run workflows with shell, command or MCP tools over HTTP without --api-key"})
      .flag({"max-workflow-bytes", "N", "largest workflow (workflow_yaml or file); larger gets 413", false, "262144"})
      .flag({"max-connections-per-ip", "N", "open connections from one client address; more get 503", false, "64"})
      .flag({"header-timeout", "SECONDS", "time for a new connection's request head to arrive", false, "10"})
      .flag({"max-concurrent", "N", "chat completions queued or running at once; more get 429", false, "8"})
      .flag({"max-connections", "N", "open connections; more get 503", false, "512"})
      .flag({"max-body-bytes", "N", "largest request body; larger gets 413", false, "1048576"})
      .flag({"max-header-bytes", "N", "largest request head; larger gets 431", false, "16384"})
      .flag({"read-timeout", "SECONDS", "time for a whole request to arrive", false, "30"})
      .flag({"idle-timeout", "SECONDS", "keep-alive connections idle this long are closed", false, "60"})
      .flag({"shutdown-grace", "SECONDS", "on SIGTERM, time for work in flight to finish", false, "30"})
      .flag({"threads", "N", "engine compute threads (0 = one per physical core)", false, "0"});
  return p;
}

}  // namespace

int cmd_serve(const std::vector<std::string>& args) {
  ArgParser parser = serve_parser();
  auto parsed = parser.parse(args, 0, 0);
  if (parser.help_requested()) {
    std::fputs(parser.usage().c_str(), stdout);
    return kExitOk;
  }
  auto usage = [](const std::string& msg) {
    std::fprintf(stderr, "dloop serve: %s\n(see 'dloop serve --help')\n", msg.c_str());
    return kExitUsage;
  };
  if (!parsed.ok()) return usage(parsed.status().message());
  const ParsedArgs& a = *parsed;
  server::ServerOptions o;
  o.host = a.get("host").value_or("127.0.0.1");
  struct IntFlag {
    const char* name;
    int64_t fallback, min, max;
    int64_t* out;
  };
  int64_t port = 0, max_conc = 0, max_conn = 0, body = 0, header = 0, read_to = 0, idle_to = 0, grace = 0, threads = 0;
  int64_t max_wf = 0, per_ip = 0, header_to = 0;
  const IntFlag ints[] = {
      {"port", 8080, 0, 65535, &port},          {"max-concurrent", 8, 1, 4096, &max_conc},
      {"max-connections", 512, 1, 65536, &max_conn}, {"max-body-bytes", 1 << 20, 1024, int64_t{1} << 30, &body},
      {"max-header-bytes", 16 << 10, 1024, 1 << 20, &header}, {"read-timeout", 30, 1, 3600, &read_to},
      {"idle-timeout", 60, 1, 3600, &idle_to},  {"shutdown-grace", 30, 0, 3600, &grace},
      {"threads", 0, 0, 1024, &threads},        {"max-workflow-bytes", 256 << 10, 1024, int64_t{1} << 30, &max_wf},
      {"max-connections-per-ip", 64, 1, 65536, &per_ip}, {"header-timeout", 10, 1, 3600, &header_to},
  };
  for (const auto& f : ints) {
    auto v = a.get_int(f.name, f.fallback, f.min, f.max);
    if (!v.ok()) return usage(v.status().message());
    *f.out = *v;
  }
  o.port = static_cast<uint16_t>(port);
  o.max_generations = static_cast<int>(max_conc);
  o.max_connections = static_cast<int>(max_conn);
  o.max_body_bytes = static_cast<size_t>(body);
  o.max_header_bytes = static_cast<size_t>(header);
  o.read_timeout = std::chrono::seconds(read_to);
  o.idle_timeout = std::chrono::seconds(idle_to);
  o.shutdown_grace = std::chrono::seconds(grace);
  o.engine_threads = static_cast<int>(threads);
  o.max_workflow_bytes = static_cast<size_t>(max_wf);
  o.max_connections_per_ip = static_cast<int>(per_ip);
  o.header_timeout = std::chrono::seconds(header_to);
  o.allowed_origins = a.all("allow-origin");
  o.allowed_hosts = a.all("allow-host");
  o.allow_command_tools = a.has("allow-command-tools");
  if (auto k = a.get("api-key")) {
    o.api_key = *k;
  } else if (const char* env = std::getenv("DLOOP_API_KEY"); env != nullptr) {
    o.api_key = env;
  }
  if (a.has("api-key") && o.api_key.empty()) return usage("--api-key must not be empty");
  if (!server::is_loopback_host(o.host) && o.api_key.empty()) {
    return usage("--host " + o.host + " is not a loopback address: serving it needs --api-key KEY (or DLOOP_API_KEY)");
  }
  auto model = resolve_model_path(a.get("model").value_or("default"));
  if (!model.ok()) return usage(model.status().message());
  o.model_path = *model;
  auto device = resolve_device(a.get("device"), "cpu");
  if (!device.ok()) {
    if (device.status().code() == base::Code::kInvalidArgument) return usage(device.status().message());
    std::fprintf(stderr, "dloop serve: %s\n", device.status().message().c_str());
    return kExitFailed;
  }
  o.device = *device;
  o.model_id = a.get("model-id").value_or("");
  o.db_path = a.get("db").value_or(memory::default_db_path());
  o.workspace = a.get("workspace").value_or(".");
  if (a.has("workflows") && a.has("workflows-dir")) return usage("give --workflows once (--workflows-dir is its old spelling)");
  o.workflows_dir = a.get("workflows").value_or(a.get("workflows-dir").value_or(""));
  if (!o.workflows_dir.empty() && !std::filesystem::is_directory(o.workflows_dir)) {
    return usage("--workflows " + o.workflows_dir.string() + " is not a directory");
  }

  auto srv = server::Server::start(o);
  if (!srv.ok()) {
    std::fprintf(stderr, "dloop serve: %s\n", srv.status().message().c_str());
    return srv.status().code() == base::Code::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  const std::string shown_host = o.host.find(':') != std::string::npos ? "[" + o.host + "]" : o.host;
  std::fprintf(stderr, "dloop serve: model '%s' (%s); listening on http://%s:%u\n", (*srv)->model_id().c_str(),
               o.model_path.c_str(), shown_host.c_str(), static_cast<unsigned>((*srv)->port()));
  std::fflush(stderr);
  const int rc = (*srv)->run();
  std::fprintf(stderr, "dloop serve: stopped\n");
  return rc == 0 ? kExitOk : kExitFailed;
}

}  // namespace dloop::cli
