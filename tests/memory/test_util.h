// Helpers shared by the memory tests: a fresh database file per test (removed with its WAL and
// SHM files afterwards), a deterministic clock, and builders for a typical agent turn.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include "dloop/memory/store.h"

namespace dloop::memory::testing_util {

// A unique path under the test temp dir; the destructor removes the database and its sidecars.
class TempDb {
 public:
  TempDb() {
    static std::atomic<int> counter{0};
    path_ = ::testing::TempDir() + "/dloop_memory_" + std::to_string(::getpid()) + "_" +
            std::to_string(counter.fetch_add(1)) + ".db";
    remove_files();
  }
  ~TempDb() { remove_files(); }
  TempDb(const TempDb&) = delete;
  TempDb& operator=(const TempDb&) = delete;
  const std::string& path() const { return path_; }

 private:
  void remove_files() {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path_ + suffix).c_str());
  }
  std::string path_;
};

// Options with a clock that advances one millisecond per reading from 2026-12-02T12:00:00Z.
inline StoreOptions test_options(StoreOptions::Sync sync = StoreOptions::Sync::kNormal) {
  StoreOptions o;
  o.sync = sync;
  auto tick = std::make_shared<std::atomic<int64_t>>(1796212800000);
  o.clock_ms = [tick] { return tick->fetch_add(1); };
  return o;
}

inline std::unique_ptr<Store> open_or_die(const std::string& path, const StoreOptions& o = test_options()) {
  auto s = Store::open(path, o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::move(s).value() : nullptr;
}

inline NewEvent ev(std::string_view type, std::string step = "", int64_t attempt = 0, int64_t turn = 0,
                   base::Json payload = base::Json::object()) {
  return NewEvent{std::string(type), std::move(step), attempt, turn, std::move(payload)};
}

// One agent turn: model_call, tool_call, tool_result for `step`, attempt 1, turn `turn`.
inline std::vector<NewEvent> agent_turn(const std::string& step, int64_t turn, const std::string& tool,
                                        base::Json result, std::string filler = "") {
  base::Json model = base::Json::object();
  base::Json call = base::Json::object();
  call.set("name", tool);
  call.set("arguments", base::Json::object({{"q", base::Json("turn " + std::to_string(turn))}}));
  model.set("output", call);
  if (!filler.empty()) model.set("prompt", filler);
  base::Json res = base::Json::object();
  res.set("name", tool);
  res.set("result", std::move(result));
  return {ev(event_type::kModelCall, step, 1, turn, model), ev(event_type::kToolCall, step, 1, turn, call),
          ev(event_type::kToolResult, step, 1, turn, res)};
}

inline NewRun new_run(std::string workflow = "triage") {
  NewRun r;
  r.workflow = std::move(workflow);
  r.workflow_path = "flows/" + r.workflow + ".yaml";
  r.workflow_hash = "sha256:0123abcd";
  r.inputs = base::Json::object({{"ticket", base::Json("printer on fire")}});
  return r;
}

}  // namespace dloop::memory::testing_util
