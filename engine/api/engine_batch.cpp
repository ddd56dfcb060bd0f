// Engine::generate_batch and tool_call_batch: one thread per request, each decoding as it would
// alone, with every pass submitted to a shared BatchCoordinator that packs the passes of all live
// requests into one forward_batch. Threads are created per batch call, never per step; the
// compute threads are the engine's pool, used by whichever request thread completes a batch.
#include <optional>
#include <thread>

#include "dloop/engine/batch.h"
#include "dloop/engine/engine.h"
#include "dloop/engine/tool_call.h"

namespace dloop::engine {
namespace {

template <typename Request, typename Result, typename Body>
std::vector<base::Result<Result>> run_batch(const Model& model, kernels::ThreadPool& pool,
                                            const std::vector<Request>& requests, const Body& body) {
  std::vector<std::optional<base::Result<Result>>> slots(requests.size());
  BatchCoordinator coordinator(model, pool, static_cast<int>(requests.size()));
  std::vector<std::thread> threads;
  threads.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    threads.emplace_back([&, i] {
      BatchCoordinator::Member member(coordinator);
      slots[i].emplace(body(requests[i], member));
      member.leave();
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
      *model_, *pool_, requests, [this](const GenerateRequest& r, PassExecutor& exec) {
        return r.response_format ? run_generate_json(r, &exec) : run_generate(r, &exec);
      });
}

std::vector<base::Result<ToolCallResult>> Engine::tool_call_batch(const std::vector<ToolCallRequest>& requests) {
  std::lock_guard<std::mutex> lock(mutex_);
  return run_batch<ToolCallRequest, ToolCallResult>(
      *model_, *pool_, requests,
      [this](const ToolCallRequest& r, PassExecutor& exec) { return run_tool_call(r, &exec); });
}

}  // namespace dloop::engine
