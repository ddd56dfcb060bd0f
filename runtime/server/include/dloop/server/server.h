// dloop::server::Server: the `dloop serve` sidecar. One Asio io_context thread runs the HTTP
// sessions (Boost.Beast) and the workflow runs; chat completions run on a dedicated engine thread
// (the Engine serialises forward passes; the runs' EngineBridge shares the same Engine). Routes:
// POST /v1/chat/completions, GET /v1/models[/{id}], POST/GET /v1/runs[...], GET /healthz,
// GET /metrics (docs/server.md). Safe defaults: loopback only unless an API key is set, body and
// header limits, read timeouts, a cap on concurrent generations (429 past it), graceful shutdown.
// Thread-safety: start() and run() from one thread; stop() from any thread or a signal handler
// context (it posts to the loop).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

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
  std::filesystem::path workflows_dir = ".";  // relative workflow paths in POST /v1/runs resolve here
  size_t max_body_bytes = 1 << 20;
  size_t max_header_bytes = 16 << 10;
  std::chrono::seconds read_timeout{30};   // a request (head and body) must arrive within this
  std::chrono::seconds idle_timeout{60};   // a kept-alive connection with no request is closed
  int max_generations = 8;              // chat completions queued or running; past it: 429
  int max_connections = 512;            // past it: 503 and close
  std::chrono::seconds shutdown_grace{30};  // SIGTERM: time for completions and runs to finish
  int engine_threads = 0;               // 0 = one per physical core
  engine::Device device = engine::Device::kCpu;  // where the model's passes run (docs/cuda.md)
  bool handle_signals = true;           // SIGINT/SIGTERM start a graceful shutdown
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(const std::string& host);

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
