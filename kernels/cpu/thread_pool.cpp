// ThreadPool: workers sleep on a generation counter (std::atomic wait/notify, a futex on Linux)
// and spin briefly before sleeping, so back-to-back parallel_for calls (a forward pass issues
// hundreds) do not pay a full wake-up each. Chunks are claimed from an atomic counter by the
// caller and the workers alike.
// Thread-safety: see thread_pool.h; one parallel_for at a time per pool (asserted).
#include "dloop/kernels/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dloop/base/assert.h"

namespace dloop::kernels {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spin iterations before blocking (tens of microseconds), yielding now and then so that an
// oversubscribed pool (more threads than free cores) does not spin while the thread it waits
// for is descheduled.
constexpr int kSpinIterations = 2000;
constexpr int kYieldEvery = 64;
// Chunks per thread: enough to rebalance around a descheduled thread, few enough that per-chunk
// set-up in fn (packing, scratch) stays negligible.
constexpr int kChunksPerThread = 4;

inline void spin_pause(int iteration) {
  if (iteration % kYieldEvery == kYieldEvery - 1)
    std::this_thread::yield();
  else
    cpu_relax();
}

}  // namespace

struct ThreadPool::State {
  int n_threads = 1;
  std::vector<std::thread> workers;
  std::atomic<uint64_t> generation{0};  // bumped once per parallel_for (and at shutdown)
  std::atomic<int> pending{0};          // workers still inside the current job
  std::atomic<int64_t> next_chunk{0};   // the next chunk to hand out
  std::atomic<bool> busy{false};
  bool stop = false;                    // written before the final generation bump
  // The current job, published by the generation bump (release) and read after it (acquire).
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0;
  int64_t n_chunks = 0;

  // Takes chunks until none are left.
  void run_chunks() {
    for (;;) {
      const int64_t c = next_chunk.fetch_add(1, std::memory_order_relaxed);
      if (c >= n_chunks) return;
      (*fn)(n * c / n_chunks, n * (c + 1) / n_chunks);
    }
  }

  void worker_loop() {
    uint64_t seen = 0;
    for (;;) {
      uint64_t g = generation.load(std::memory_order_acquire);
      for (int spin = 0; g == seen && spin < kSpinIterations; ++spin) {
        spin_pause(spin);
        g = generation.load(std::memory_order_acquire);
      }
      while (g == seen) {
        generation.wait(seen, std::memory_order_acquire);
        g = generation.load(std::memory_order_acquire);
      }
      seen = g;
      if (stop) return;
      run_chunks();
      if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) pending.notify_one();
    }
  }
};

ThreadPool::ThreadPool(int n_threads) : state_(std::make_unique<State>()) {
  DLOOP_ASSERT_MSG(n_threads >= 1, "ThreadPool needs at least one thread");
  state_->n_threads = n_threads;
  state_->workers.reserve(static_cast<size_t>(n_threads - 1));
  for (int i = 1; i < n_threads; ++i)
    state_->workers.emplace_back([s = state_.get()] { s->worker_loop(); });
}

ThreadPool::~ThreadPool() {
  state_->stop = true;
  state_->generation.fetch_add(1, std::memory_order_release);
  state_->generation.notify_all();
  for (std::thread& t : state_->workers) t.join();
}

int ThreadPool::size() const { return state_->n_threads; }

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  State& s = *state_;
  if (s.n_threads == 1 || n == 1) {
    fn(0, n);
    return;
  }
  bool was_busy = s.busy.exchange(true, std::memory_order_acquire);
  DLOOP_ASSERT_MSG(!was_busy, "ThreadPool::parallel_for called concurrently or re-entrantly");
  s.fn = &fn;
  s.n = n;
  s.n_chunks = std::min<int64_t>(n, int64_t{kChunksPerThread} * s.n_threads);
  s.next_chunk.store(0, std::memory_order_relaxed);
  s.pending.store(s.n_threads - 1, std::memory_order_relaxed);
  s.generation.fetch_add(1, std::memory_order_release);
  s.generation.notify_all();
  s.run_chunks();
  int left = s.pending.load(std::memory_order_acquire);
  for (int spin = 0; left != 0 && spin < kSpinIterations; ++spin) {
    spin_pause(spin);
    left = s.pending.load(std::memory_order_acquire);
  }
  while (left != 0) {
    s.pending.wait(left, std::memory_order_acquire);
    left = s.pending.load(std::memory_order_acquire);
  }
  s.fn = nullptr;
  s.busy.store(false, std::memory_order_release);
}

int default_thread_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int logical = 0;
  std::set<std::pair<std::string, std::string>> cores;  // (package, core id)
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &set)) continue;
      ++logical;
      std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
      std::ifstream pkg(base + "physical_package_id"), core(base + "core_id");
      std::string p, c;
      if (pkg >> p && core >> c) cores.emplace(p, c);
    }
  }
  if (!cores.empty()) return static_cast<int>(cores.size());
  if (logical > 0) return logical;
  unsigned hc = std::thread::hardware_concurrency();
  return hc > 0 ? static_cast<int>(hc) : 1;
}

}  // namespace dloop::kernels
