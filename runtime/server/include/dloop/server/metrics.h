// Metrics: the counters behind GET /metrics, written in the Prometheus text exposition format
// (version 0.0.4): requests and a latency histogram by route and status, prompt and completion
// tokens, forward passes, tool calls, active generations and runs. Thread-safe (one mutex; the
// hot path takes it once per request).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace dloop::server {

class Metrics {
 public:
  static constexpr std::array<double, 12> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                      0.5,   1.0,  2.5,   5.0,  10.0, 30.0};

  // `route` is the route pattern ("/v1/runs/{id}"), never the raw path, so labels stay bounded.
  void observe_request(const std::string& route, int status, double seconds);
  void add_tokens(int64_t prompt, int64_t completion);
  void add_forward_passes(int64_t n);
  void add_tool_calls(int64_t n, const char* source);  // source: "completion" or "run"
  void add_generation(int delta);                       // in flight (queued or running)
  void add_run(int delta);                              // runs executing in this server
  void add_rejected(const char* reason);                // 429 and 503 answers by reason
  int active_generations() const;
  int active_runs() const;

  std::string prometheus_text() const;

 private:
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> buckets{};
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, Histogram> requests_;
  int64_t prompt_tokens_ = 0;
  int64_t completion_tokens_ = 0;
  int64_t forward_passes_ = 0;
  std::map<std::string, int64_t> tool_calls_;
  std::map<std::string, int64_t> rejected_;
  int generations_ = 0;
  int runs_ = 0;
};

}  // namespace dloop::server
