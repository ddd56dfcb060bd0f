// EngineBridge: the engine on its own thread. tool_call() queues the request on the engine thread
// (opening the model there on first use) and resumes the awaiting coroutine on its own executor
// with the result, so the event loop never runs a forward pass. Requests that arrive while the
// engine is busy are decoded together by Engine::tool_call_batch (one forward pass per denoising
// step for all of them; each result is exactly what it would be alone). Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include "dloop/base/status.h"
#include "dloop/engine/engine.h"
#include "dloop/engine/tool_call.h"

namespace dloop::runtime {

class EngineBridge {
 public:
  // `model_path` is opened lazily, on the engine thread, by the first request, on `device`
  // (engine/device.h: kCuda uploads the weights to the GPU; errors then fail that request).
  explicit EngineBridge(std::string model_path, int threads = 0, engine::Device device = engine::Device::kCpu);
  // A seam for tests: every request goes to `backend` (on the engine thread) instead of a model.
  using Backend = std::function<base::Result<engine::ToolCallResult>(const engine::ToolCallRequest&)>;
  explicit EngineBridge(Backend backend);
  ~EngineBridge();
  EngineBridge(const EngineBridge&) = delete;
  EngineBridge& operator=(const EngineBridge&) = delete;

  const std::string& model_path() const { return model_path_; }
  // Errors: the model failed to open, or the engine rejected the request.
  boost::asio::awaitable<base::Result<engine::ToolCallResult>> tool_call(engine::ToolCallRequest request);

 private:
  struct Pending;
  // On the engine thread: decodes every queued request (alone, or as one batch).
  void drain();
  bool open_engine();

  std::string model_path_;
  int threads_ = 0;
  engine::Device device_ = engine::Device::kCpu;
  Backend backend_;
  boost::asio::thread_pool thread_{1};
  std::unique_ptr<engine::Engine> engine_;  // touched only on thread_
  base::Status open_status_;
  bool opened_ = false;
  std::mutex queue_mutex_;
  std::vector<std::shared_ptr<Pending>> queue_;  // requests not yet taken by drain()
};

}  // namespace dloop::runtime
