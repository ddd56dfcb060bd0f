// EngineBridge: one engine thread; see engine_bridge.h. Every tool_call() queues its request,
// then posts a job to the engine thread that drains the queue: the first job to run takes every
// request queued so far and decodes them together, the jobs of the requests it took find their
// result ready. Requests that arrive during a batch form the next one.
#include "dloop/runtime/engine_bridge.h"

#include <optional>

#include "offload.h"

namespace dloop::runtime {

struct EngineBridge::Pending {
  engine::ToolCallRequest request;
  std::optional<base::Result<engine::ToolCallResult>> result;  // set on the engine thread
};

EngineBridge::EngineBridge(std::string model_path, int threads, engine::Device device)
    : model_path_(std::move(model_path)), threads_(threads), device_(device) {}

EngineBridge::EngineBridge(Backend backend) : model_path_("(test backend)"), backend_(std::move(backend)) {}

EngineBridge::~EngineBridge() { thread_.join(); }

bool EngineBridge::open_engine() {
  if (!opened_) {
    opened_ = true;
    engine::EngineOptions options;
    options.model_path = model_path_;
    options.threads = threads_;
    options.device = device_;
    auto opened = engine::Engine::open(options);
    if (opened.ok()) {
      engine_ = std::move(opened).value();
    } else {
      open_status_ = opened.status();
    }
  }
  return engine_ != nullptr;
}

void EngineBridge::drain() {
  std::vector<std::shared_ptr<Pending>> batch;
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    batch.swap(queue_);
  }
  if (batch.empty()) return;
  if (backend_) {
    for (auto& p : batch) p->result.emplace(backend_(p->request));
    return;
  }
  if (!open_engine()) {
    for (auto& p : batch) p->result.emplace(open_status_);
    return;
  }
  if (batch.size() == 1) {
    batch[0]->result.emplace(engine_->tool_call(batch[0]->request));
    return;
  }
  std::vector<engine::ToolCallRequest> requests;
  requests.reserve(batch.size());
  for (auto& p : batch) requests.push_back(p->request);
  std::vector<base::Result<engine::ToolCallResult>> results = engine_->tool_call_batch(requests);
  for (size_t i = 0; i < batch.size(); ++i) batch[i]->result.emplace(std::move(results[i]));
}

asio::awaitable<base::Result<engine::ToolCallResult>> EngineBridge::tool_call(engine::ToolCallRequest request) {
  auto pending = std::make_shared<Pending>();
  pending->request = std::move(request);
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    queue_.push_back(pending);
  }
  auto work = [this, pending]() {
    if (!pending->result) drain();
    return std::move(*pending->result);
  };
  auto op = offload_boxed<base::Result<engine::ToolCallResult>>(thread_.get_executor(), std::move(work));
  Boxed<base::Result<engine::ToolCallResult>> box = co_await std::move(op);
  co_return std::move(*box.value);
}

}  // namespace dloop::runtime
