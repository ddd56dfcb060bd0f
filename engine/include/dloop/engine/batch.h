// Cross-request batching: BatchCoordinator gathers the next pass of every live request and runs
// them as one forward_batch (one pass over the weights per denoising step for all of them).
// Each request runs its own decoder on its own thread and submits passes through a Member; a
// submit blocks until every live member has submitted (or left), then the last one to arrive
// runs the batch on the engine's pool and wakes the others. A request's passes and their
// results are exactly those it would get alone, because forward_batch computes every row
// independently of the other rows in the batch (tests/engine/batch_test.cpp).
// Thread-safety: submit() and leave() are called from the member threads; one batch runs at a
// time. Every member must call leave() exactly once, when its request is done (Member's
// destructor does it), or the others wait for it forever.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <vector>

#include "dloop/engine/forwarder.h"

namespace dloop::engine {

struct BatchStats {
  int64_t batches = 0;      // forward_batch calls
  int64_t passes = 0;       // sequence passes run
  int64_t rows = 0;         // packed rows run through the layers
  int64_t max_batch = 0;    // most passes in one batch
};

// The barrier under BatchCoordinator and the device backends' batches: members submit one pass
// each; the last of the live members to submit runs all pending passes with `run` (which sets
// each pass's `status`), and every submitter gets its own pass's status back. Pass needs `lo`,
// `hi` (rows computed) and `status`.
template <typename Pass>
class PassBarrier {
 public:
  using Runner = std::function<void(std::span<Pass* const>)>;
  PassBarrier(int members, Runner run) : live_(members), run_(std::move(run)) {}

  base::Status submit(Pass& pass) {
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

  void leave() {
    std::lock_guard<std::mutex> lock(mutex_);
    --live_;
    if (!pending_.empty() && static_cast<int>(pending_.size()) >= live_) run_pending();
  }

  BatchStats stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

 private:
  void run_pending() {  // mutex held
    run_(std::span<Pass* const>(pending_));
    for (Pass* p : pending_) stats_.rows += p->status.ok() ? p->hi - p->lo : 0;
    ++stats_.batches;
    stats_.passes += static_cast<int64_t>(pending_.size());
    stats_.max_batch = std::max<int64_t>(stats_.max_batch, static_cast<int64_t>(pending_.size()));
    pending_.clear();
    ++generation_;
    cv_.notify_all();
  }

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  int live_;
  Runner run_;
  uint64_t generation_ = 0;
  std::vector<Pass*> pending_;
  BatchStats stats_;
};

class BatchCoordinator {
 public:
  BatchCoordinator(const Model& model, kernels::ThreadPool& pool, int members)
      : model_(model), pool_(pool), barrier_(members, [this](std::span<SequencePass* const> p) { run(p); }) {}

  class Member final : public PassExecutor {
   public:
    explicit Member(BatchCoordinator& c) : c_(c) {}
    ~Member() override { leave(); }
    Member(const Member&) = delete;
    Member& operator=(const Member&) = delete;
    base::Status run(SequencePass& pass) override { return c_.submit(pass); }
    void leave() {
      if (!left_) c_.leave();
      left_ = true;
    }

   private:
    BatchCoordinator& c_;
    bool left_ = false;
  };

  base::Status submit(SequencePass& pass) { return barrier_.submit(pass); }
  void leave() { barrier_.leave(); }
  BatchStats stats() const { return barrier_.stats(); }

 private:
  void run(std::span<SequencePass* const> pending);

  const Model& model_;
  kernels::ThreadPool& pool_;
  BatchState state_;
  PassBarrier<SequencePass> barrier_;
};

}  // namespace dloop::engine
