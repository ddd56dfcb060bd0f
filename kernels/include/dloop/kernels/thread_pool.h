// ThreadPool: a persistent pool of worker threads for the CPU kernels. Threads are created once,
// in the constructor, and sleep between calls; parallel_for never creates threads.
// Not a general task system: one parallel_for runs at a time per pool. Calling parallel_for on
// the same pool from two threads at once, or from inside its own fn, is a bug (asserts).
// Different pools are independent.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace dloop::kernels {

class ThreadPool {
 public:
  // n_threads counts the calling thread, so ThreadPool(1) starts no worker and runs everything
  // inline. Precondition: n_threads >= 1.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();  // joins the workers
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;

  // Runs fn(begin, end) over [0, n) split into contiguous, disjoint chunks and returns when all
  // are done. There are min(n, 4 * size()) chunks (one, run inline, when size() == 1), handed out
  // dynamically to the caller and the workers, so a thread slowed by other load simply takes
  // fewer; fn runs concurrently on up to size() threads. n <= 0 calls nothing. fn must not throw.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Physical cores of this machine (SMT siblings counted once), at least 1.
int default_thread_count();

}  // namespace dloop::kernels
