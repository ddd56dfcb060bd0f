// run_workflows(): the process-level driver behind `dloop run` and `dloop resume`. One io_context
// on the calling thread; a thread pool for tools' blocking work; one worker thread for Store calls;
// the engine on its own thread. Up to `parallel` runs execute at once as coroutines. SIGINT and
// SIGTERM (asio::signal_set) cancel every run gracefully: in-flight tools are stopped, nothing is
// marked completed that did not complete, and each run ends `cancelled` and stays resumable.
// Call from one thread at a time (it installs signal handlers for its duration).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dloop/engine/device.h"
#include "dloop/memory/store.h"
#include "dloop/runtime/executor.h"

namespace dloop::runtime {

struct DriverOptions {
  std::shared_ptr<memory::Store> store;
  std::string model_path;  // "" = no engine (agent steps fail with model_error)
  engine::Device device = engine::Device::kCpu;  // where model_path's passes run
  std::shared_ptr<EngineBridge> engine;  // used instead of model_path when set (tests)
  int parallel = 1;        // runs at once
  int blocking_threads = 4;
  StoreRetry store_retry;        // see executor.h
  int64_t lease_ttl_ms = 30000;  // see executor.h
};

struct DriverResult {
  std::vector<RunOutcome> runs;  // in request order
  bool interrupted = false;      // a signal arrived
};

DriverResult run_workflows(std::vector<RunRequest> requests, const DriverOptions& options);

}  // namespace dloop::runtime
