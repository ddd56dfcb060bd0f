// ThreadPool: coverage and disjointness of chunks, chunk count, concurrency on every thread and
// the caller, many back-to-back calls, default_thread_count.
#include "dloop/kernels/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

namespace dloop::kernels {
namespace {

class ThreadPoolTest : public ::testing::TestWithParam<int> {};

TEST_P(ThreadPoolTest, CoversRangeExactlyOnceInContiguousChunks) {
  ThreadPool pool(GetParam());
  EXPECT_EQ(pool.size(), GetParam());
  for (int64_t n : {0, 1, 2, 3, 7, 64, 1000, 12345}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    std::mutex mu;
    std::vector<std::pair<int64_t, int64_t>> chunks;
    pool.parallel_for(n, [&](int64_t begin, int64_t end) {
      {
        std::lock_guard<std::mutex> lock(mu);
        chunks.emplace_back(begin, end);
      }
      for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
    });
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "n=" << n << " i=" << i;
    EXPECT_LE(static_cast<int64_t>(chunks.size()), 4 * GetParam());
    if (GetParam() == 1) {
      EXPECT_LE(chunks.size(), 1u);
    }
    for (const auto& [b, e] : chunks) EXPECT_LT(b, e);
  }
}

TEST_P(ThreadPoolTest, RunsChunksConcurrentlyOnEveryThreadAndTheCaller) {
  // size() chunks that each wait until size() chunks are running at once: this finishes only if
  // every thread, the caller included, runs one concurrently.
  const int n = GetParam();
  ThreadPool pool(n);
  std::atomic<int> arrived{0};
  std::atomic<bool> timed_out{false};
  std::mutex mu;
  std::set<std::thread::id> ids;
  pool.parallel_for(n, [&](int64_t, int64_t) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    }
    arrived.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (arrived.load() < n) {
      if (std::chrono::steady_clock::now() > deadline) {
        timed_out = true;
        return;
      }
      std::this_thread::yield();
    }
  });
  EXPECT_FALSE(timed_out.load());
  EXPECT_EQ(static_cast<int>(ids.size()), n);
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 1u);
}

TEST_P(ThreadPoolTest, ManyBackToBackCalls) {
  ThreadPool pool(GetParam());
  std::atomic<int64_t> sum{0};
  for (int call = 0; call < 20000; ++call)
    pool.parallel_for(5, [&](int64_t b, int64_t e) { sum.fetch_add(e - b); });
  EXPECT_EQ(sum.load(), 5 * 20000);
}

TEST_P(ThreadPoolTest, DestroysIdlePool) {
  for (int i = 0; i < 50; ++i) ThreadPool pool(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Threads, ThreadPoolTest, ::testing::Values(1, 2, 3, 4));

TEST(ThreadPool, DefaultThreadCountIsPositive) {
  EXPECT_GE(default_thread_count(), 1);
  EXPECT_LE(default_thread_count(), static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

}  // namespace
}  // namespace dloop::kernels
