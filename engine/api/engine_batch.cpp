// Engine::generate_batch and tool_call_batch: one thread per request, each decoding as it would
// alone, with every pass submitted to a shared BatchCoordinator that packs the passes of all live
// requests into one forward_batch. Threads are created per batch call, never per step; the
// compute threads are the engine's pool, used by whichever request thread completes a batch. On
// a device the passes go to the backend's DeviceBatch instead, with the same protocol.
#include <memory>
#include <optional>
#include <thread>

#include "dloop/engine/batch.h"
#include "dloop/engine/engine.h"
#include "dloop/engine/tool_call.h"

namespace dloop::engine {
namespace {

// On a device the members are DeviceBatchMembers of one DeviceBatch (device.h); on the CPU,
// members of a BatchCoordinator.
template <typename Request, typename Result, typename Body>
std::vector<base::Result<Result>> run_batch(const Model& model, kernels::ThreadPool& pool, DeviceModel* device,
                                            const std::vector<Request>& requests, const Body& body) {
  std::vector<std::optional<base::Result<Result>>> slots(requests.size());
  const int members = static_cast<int>(requests.size());
  std::optional<BatchCoordinator> coordinator;
  std::unique_ptr<DeviceBatch> device_batch;
  if (device != nullptr) {
    device_batch = device->make_batch(members);
  } else {
    coordinator.emplace(model, pool, members);
  }
  std::vector<std::thread> threads;
  threads.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    threads.emplace_back([&, i] {
      if (device_batch != nullptr) {
        DeviceBatchMember member(*device_batch);
        slots[i].emplace(body(requests[i], member));
        member.leave();
      } else {
        BatchCoordinator::Member member(*coordinator);
        slots[i].emplace(body(requests[i], member));
        member.leave();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<base::Result<Result>> out;
  out.reserve(slots.size());
  for (auto& s : slots) out.push_back(std::move(*s));
  return out;
}

}  // namespace

std::vector<base::Result<GenerateResult>> Engine::generate_batch(const std::vector<GenerateRequest>& requests) {
  std::lock_guard<std::mutex> lock(mutex_);
  return run_batch<GenerateRequest, GenerateResult>(
      *model_, *pool_, device_.get(), requests, [this](const GenerateRequest& r, PassExecutor& exec) {
        return r.response_format ? run_generate_json(r, &exec) : run_generate(r, &exec);
      });
}

std::vector<base::Result<ToolCallResult>> Engine::tool_call_batch(const std::vector<ToolCallRequest>& requests) {
  std::lock_guard<std::mutex> lock(mutex_);
  return run_batch<ToolCallRequest, ToolCallResult>(
      *model_, *pool_, device_.get(), requests,
      [this](const ToolCallRequest& r, PassExecutor& exec) { return run_tool_call(r, &exec); });
}

}  // namespace dloop::engine
