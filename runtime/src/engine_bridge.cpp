// EngineBridge: one engine thread; see engine_bridge.h.
#include "dloop/runtime/engine_bridge.h"

#include "offload.h"

namespace dloop::runtime {

EngineBridge::EngineBridge(std::string model_path, int threads) : model_path_(std::move(model_path)), threads_(threads) {}

EngineBridge::EngineBridge(Backend backend) : model_path_("(test backend)"), backend_(std::move(backend)) {}

EngineBridge::~EngineBridge() { thread_.join(); }

base::Result<engine::ToolCallResult> EngineBridge::run_on_engine_thread(const engine::ToolCallRequest& request) {
  if (backend_) return backend_(request);
  if (!opened_) {
    opened_ = true;
    engine::EngineOptions options;
    options.model_path = model_path_;
    options.threads = threads_;
    auto opened = engine::Engine::open(options);
    if (opened.ok()) {
      engine_ = std::move(opened).value();
    } else {
      open_status_ = opened.status();
    }
  }
  if (!engine_) return open_status_;
  return engine_->tool_call(request);
}

asio::awaitable<base::Result<engine::ToolCallResult>> EngineBridge::tool_call(engine::ToolCallRequest request) {
  auto work = [this, request = std::move(request)]() { return run_on_engine_thread(request); };
  auto op = offload_boxed<base::Result<engine::ToolCallResult>>(thread_.get_executor(), std::move(work));
  Boxed<base::Result<engine::ToolCallResult>> box = co_await std::move(op);
  co_return std::move(*box.value);
}

}  // namespace dloop::runtime
