// Load test: `dloop serve` on the bundled model with a fixed number of keep-alive connections for
// a bounded time, most of them polling GET /healthz and a few asking for small chat completions
// (under the generation cap). Every answer must be a 200 and the server's resident memory must stay
// flat: after a warm-up round, a second and a third round of the same load may not grow it by
// more than 16 MiB. Prints requests per second and latency percentiles (the figures in
// docs/performance.md); asserts no timing. DLOOP_LOAD_SECONDS sets the round length (default 5).
// Label: slow.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

#include "http_client.h"
#include "serve_process.h"

namespace dloop::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Tally {
  std::mutex mutex;
  std::vector<double> health_ms, chat_ms;
  int64_t errors = 0;
  std::string first_error;
};

void round_of_load(uint16_t port, int health_conns, int chat_conns, double seconds, Tally& t) {
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  const std::string chat_body =
      R"({"model":"default","messages":[{"role":"user","content":"Say hi."}],"max_completion_tokens":8,"reasoning_effort":"instant"})";
  auto worker = [&](bool chat) {
    HttpClient c("127.0.0.1", port);
    std::vector<double> lat;
    int64_t errors = 0;
    std::string first;
    while (Clock::now() < end) {
      const auto t0 = Clock::now();
      HttpReply r = chat ? c.request("POST", "/v1/chat/completions", chat_body) : c.request("GET", "/healthz");
      lat.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      if (r.status != 200) {
        if (errors++ == 0) first = std::to_string(r.status) + " " + r.body;
      }
    }
    std::lock_guard<std::mutex> lock(t.mutex);
    auto& dst = chat ? t.chat_ms : t.health_ms;
    dst.insert(dst.end(), lat.begin(), lat.end());
    if (errors && t.first_error.empty()) t.first_error = first;
    t.errors += errors;
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < health_conns; ++i) threads.emplace_back(worker, false);
  for (int i = 0; i < chat_conns; ++i) threads.emplace_back(worker, true);
  for (auto& th : threads) th.join();
}

double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

TEST(ServerLoad, ZeroErrorsAndFlatMemory) {
  const char* env = std::getenv("DLOOP_LOAD_SECONDS");
  const double seconds = env ? std::atof(env) : 5.0;
  constexpr int kHealth = 16;
  constexpr int kChat = 2;
  const fs::path tmp = fs::path(testing::TempDir()) / (std::string("dloop_load_").append(std::to_string(getpid())));
  fs::create_directories(tmp);
  ServeProcess serve({"--model", std::string(DLOOP_SOURCE_DIR) + "/models/default.gguf", "--db",
                      (tmp / "state.db").string(), "--threads", "1", "--max-concurrent", "8"},
                     (tmp / "serve.log").string());
  ASSERT_GT(serve.port(), 0);

  Tally warm;
  round_of_load(serve.port(), kHealth, kChat, seconds, warm);
  EXPECT_EQ(warm.errors, 0) << warm.first_error;
  const long rss_before = serve.rss_kib();
  Tally t;
  round_of_load(serve.port(), kHealth, kChat, seconds, t);
  round_of_load(serve.port(), kHealth, kChat, seconds, t);
  const long rss_after = serve.rss_kib();

  EXPECT_EQ(t.errors, 0) << t.first_error;
  EXPECT_GT(t.health_ms.size(), 0u);
  EXPECT_GT(t.chat_ms.size(), 0u);
  EXPECT_LT(rss_after - rss_before, 16 * 1024) << "RSS grew from " << rss_before << " KiB to " << rss_after << " KiB";
  const double total = 2 * seconds;
  std::printf("load: %d connections on GET /healthz, %d on POST /v1/chat/completions (8 tokens, instant), 2 x %.0f s\n",
              kHealth, kChat, seconds);
  std::printf("load: healthz %zu requests, %.0f req/s, p50 %.2f ms, p99 %.2f ms\n", t.health_ms.size(),
              static_cast<double>(t.health_ms.size()) / total, pct(t.health_ms, 0.5), pct(t.health_ms, 0.99));
  std::printf("load: completions %zu requests, %.1f req/s, p50 %.1f ms, p99 %.1f ms\n", t.chat_ms.size(),
              static_cast<double>(t.chat_ms.size()) / total, pct(t.chat_ms, 0.5), pct(t.chat_ms, 0.99));
  std::printf("load: errors %lld; server RSS %.1f MiB before, %.1f MiB after\n", static_cast<long long>(t.errors),
              rss_before / 1024.0, rss_after / 1024.0);
  EXPECT_EQ(serve.stop(), 0) << serve.log();
}

}  // namespace
}  // namespace dloop::test
