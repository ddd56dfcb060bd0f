// BatchCoordinator: forward_batch over the passes its PassBarrier gathers; see batch.h.
#include "dloop/engine/batch.h"

namespace dloop::engine {

void BatchCoordinator::run(std::span<SequencePass* const> pending) {
  std::vector<SequencePass> passes;
  passes.reserve(pending.size());
  for (SequencePass* p : pending) passes.push_back(*p);
  (void)forward_batch(model_, pool_, passes, state_);  // per-pass statuses below
  for (size_t i = 0; i < pending.size(); ++i) pending[i]->status = passes[i].status;
}

}  // namespace dloop::engine
