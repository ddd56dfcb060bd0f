// BatchCoordinator: a generation-counted barrier around forward_batch; see batch.h.
#include "dloop/engine/batch.h"

#include <algorithm>

namespace dloop::engine {

void BatchCoordinator::run_pending() {
  std::vector<SequencePass> passes;
  passes.reserve(pending_.size());
  for (SequencePass* p : pending_) passes.push_back(*p);
  (void)forward_batch(model_, pool_, passes, state_);  // per-pass statuses below
  for (size_t i = 0; i < pending_.size(); ++i) {
    pending_[i]->status = passes[i].status;
    stats_.rows += passes[i].status.ok() ? passes[i].hi - passes[i].lo : 0;
  }
  ++stats_.batches;
  stats_.passes += static_cast<int64_t>(pending_.size());
  stats_.max_batch = std::max<int64_t>(stats_.max_batch, static_cast<int64_t>(pending_.size()));
  pending_.clear();
  ++generation_;
  cv_.notify_all();
}

base::Status BatchCoordinator::submit(SequencePass& pass) {
  std::unique_lock<std::mutex> lock(mutex_);
  pending_.push_back(&pass);
  if (static_cast<int>(pending_.size()) >= live_) {
    run_pending();
  } else {
    const uint64_t gen = generation_;
    cv_.wait(lock, [&] { return generation_ != gen; });
  }
  return pass.status;
}

void BatchCoordinator::leave() {
  std::lock_guard<std::mutex> lock(mutex_);
  --live_;
  if (!pending_.empty() && static_cast<int>(pending_.size()) >= live_) run_pending();
}

BatchStats BatchCoordinator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace dloop::engine
