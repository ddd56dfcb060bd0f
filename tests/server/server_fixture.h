// Test helper for the in-process server tests: a Server on a free loopback port run on its own
// thread (ServerFixture), the options every test starts from (a fresh temp directory, the tiny
// test model, small limits), and checks of the OpenAI error shape and of SSE bodies.
// Not thread-safe: one fixture per test.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/server/server.h"
#include "http_client.h"

namespace dloop::server {

using base::Json;
namespace fs = std::filesystem;

class ServerFixture {
 public:
  explicit ServerFixture(ServerOptions o) {
    auto s = Server::start(std::move(o));
    if (!s.ok()) {
      ADD_FAILURE() << s.status().to_string();
      return;
    }
    server_ = std::move(s).value();
    thread_ = std::thread([this] { server_->run(); });
  }
  ~ServerFixture() { stop(); }
  // A graceful shutdown, as SIGTERM starts it; returns once run() has returned.
  void stop() {
    if (!server_ || !thread_.joinable()) return;
    server_->stop();
    thread_.join();
  }
  uint16_t port() const { return server_->port(); }
  bool ok() const { return server_ != nullptr; }

 private:
  std::unique_ptr<Server> server_;
  std::thread thread_;
};

inline ServerOptions test_options(const std::string& tag) {
  ServerOptions o;
  o.port = 0;
  o.model_path = std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/llada-f32.gguf";
  o.model_id = "tiny";
  const fs::path dir = fs::path(testing::TempDir()) / ("dloop_server_" + tag + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  o.db_path = (dir / "state.db").string();
  o.workspace = dir;
  o.workflows_dir = dir;
  o.handle_signals = false;
  o.engine_threads = 1;
  o.max_body_bytes = 8192;
  o.max_header_bytes = 2048;
  return o;
}

inline Json body_json(const test::HttpReply& r) {
  auto j = Json::parse(r.body);
  EXPECT_TRUE(j.ok()) << r.body;
  return j.ok() ? *j : Json::object();
}

// The error object: {"error": {"message", "type", "param", "code"}}, all four keys present.
inline void expect_error(const test::HttpReply& r, int status, const std::string& code) {
  EXPECT_EQ(r.status, status) << r.body;
  Json j = body_json(r);
  const Json* e = j.find("error");
  ASSERT_NE(e, nullptr) << r.body;
  ASSERT_TRUE(e->is_object());
  for (const char* k : {"message", "type", "param", "code"}) EXPECT_NE(e->find(k), nullptr) << k;
  ASSERT_TRUE(e->find("code")->is_string()) << r.body;
  EXPECT_EQ(e->find("code")->as_string(), code);
  EXPECT_FALSE(e->find("message")->as_string().empty());
}

// SSE "data:" payloads of a stream body, in order.
inline std::vector<std::string> sse_data(const std::string& body) {
  std::vector<std::string> out;
  size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    const size_t end = body.find('\n', at);
    out.push_back(body.substr(at + 6, end - at - 6));
    at = end;
  }
  return out;
}

}  // namespace dloop::server
