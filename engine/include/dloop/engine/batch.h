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

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "dloop/engine/forwarder.h"

namespace dloop::engine {

struct BatchStats {
  int64_t batches = 0;      // forward_batch calls
  int64_t passes = 0;       // sequence passes run
  int64_t rows = 0;         // packed rows run through the layers
  int64_t max_batch = 0;    // most passes in one batch
};

class BatchCoordinator {
 public:
  BatchCoordinator(const Model& model, kernels::ThreadPool& pool, int members)
      : model_(model), pool_(pool), live_(members) {}

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

  base::Status submit(SequencePass& pass);
  void leave();
  BatchStats stats() const;

 private:
  void run_pending();  // mutex held

  const Model& model_;
  kernels::ThreadPool& pool_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  int live_;
  uint64_t generation_ = 0;
  std::vector<SequencePass*> pending_;
  BatchState state_;
  BatchStats stats_;
};

}  // namespace dloop::engine
