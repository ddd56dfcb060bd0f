// dloop::server::Server: the `dloop serve` sidecar. One Asio io_context thread runs the HTTP
// sessions (Boost.Beast) and the workflow runs; chat completions run on a dedicated engine thread
// (the Engine serialises forward passes; the runs' EngineBridge shares the same Engine). Routes:
// POST /v1/chat/completions, GET /v1/models[/{id}], POST/GET /v1/runs[...], GET /healthz,
// GET /metrics (docs/server.md). Safe defaults: loopback only unless an API key is set, body and
// header limits, read timeouts, a cap on concurrent generations (429 past it), graceful shutdown,
// and the cross-site guards of docs/server.md "Threat model" (Host and Origin checks, JSON-only
// bodies, command tools only with an API key, workflow files only from --workflows DIR).
// Thread-safety: start() and run() from one thread; stop() from any thread or a signal handler
// context (it posts to the loop).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dloop/base/status.h"
#include "dloop/engine/device.h"

namespace dloop::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;                 // 0: any free port (see Server::port())
  std::string api_key;                  // required (non-empty) unless host is a loopback address
  std::string model_path;               // the GGUF file served
  std::string model_id;                 // the id clients send as `model`; "" = the file's stem
  std::string db_path;                  // state database of the runs API
  std::filesystem::path workspace = ".";  // root of file tools and processes for runs
  // {"workflow": PATH} of POST /v1/runs names a file under this directory (relative, no "..", no
  // symlink out of it); empty: workflow paths are refused (403) and only workflow_yaml runs.
  std::filesystem::path workflows_dir;
  std::vector<std::string> allowed_origins;  // exact `Origin` values accepted; others get 403
  std::vector<std::string> allowed_hosts;    // extra `Host` names accepted (besides loopback names)
  // Workflows that offer `shell`, command tools or MCP servers run over HTTP only with an API key
  // configured (which then authenticates the request) or with this set; otherwise 403.
  bool allow_command_tools = false;
  size_t max_body_bytes = 1 << 20;
  size_t max_header_bytes = 16 << 10;
  size_t max_workflow_bytes = 256 << 10;   // workflow_yaml text or workflow file; past it: 413
  std::chrono::seconds header_timeout{10};  // the first request's head must arrive within this
  std::chrono::seconds read_timeout{30};   // a request (head and body) must arrive within this
  std::chrono::seconds idle_timeout{60};   // a kept-alive connection with no request is closed
  int max_generations = 8;              // chat completions queued or running; past it: 429
  int max_connections = 512;            // past it: 503 and close
  int max_connections_per_ip = 64;      // open connections from one client address; past it: 503
  std::chrono::seconds shutdown_grace{30};  // SIGTERM: time for completions and runs to finish
  int engine_threads = 0;               // 0 = one per physical core
  engine::Device device = engine::Device::kCpu;  // where the model's passes run (docs/cuda.md)
  bool handle_signals = true;           // SIGINT/SIGTERM start a graceful shutdown
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(const std::string& host);

// Whether a request's `Host` header value may be served: the bound address, a loopback name
// (localhost, 127.0.0.1, [::1]) or one of `allowed` (any port); with a port, loopback names and
// the bound address must carry the bound port. A wildcard bind (0.0.0.0, ::) accepts any IP
// literal: DNS rebinding needs a name. Empty `host` (HTTP/1.0 without Host) is accepted.
bool host_header_allowed(std::string_view host, const ServerOptions& options, uint16_t bound_port);

// Constant-time comparison of a presented API key with the configured one (the time does not
// depend on where the strings differ).
bool api_key_matches(std::string_view presented, std::string_view expected);

class Server {
 public:
  // Validates the options (a non-loopback host without an API key is invalid_argument), opens
  // the model and the state database, and binds the listening socket. Errors name the option,
  // file or address.
  static base::Result<std::unique_ptr<Server>> start(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  uint16_t port() const;
  const std::string& model_id() const;
  // Serves on the calling thread until stop() or a signal, then finishes in-flight completions,
  // cancels runs (they stay resumable with `dloop resume`) and returns. 0 on a clean shutdown.
  int run();
  void stop();

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dloop::server
