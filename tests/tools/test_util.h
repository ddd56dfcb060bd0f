// Helpers for the tools tests: an io_context plus a thread pool, a way to run a coroutine to
// completion, and a temporary workspace directory.
#pragma once

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "dloop/tools/builtins.h"
#include "dloop/tools/registry.h"

namespace dloop::tools::testing {

inline Json J(std::string_view text) {
  auto r = Json::parse(text);
  DLOOP_ASSERT_MSG(r.ok(), "bad JSON in a test");
  return *r;
}

class Harness {
 public:
  Harness() = default;
  ~Harness() { pool_.join(); }

  ToolContext ctx(std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) {
    ToolContext c;
    c.blocking = pool_.get_executor();
    if (timeout.count() > 0) c.deadline = Clock::now() + timeout;
    c.workspace = workspace_;
    c.scope = "test-flow";
    return c;
  }

  // Runs `aw` on the io_context until it completes (other pending work is left for later runs).
  template <typename T>
  T run(asio::awaitable<T> aw) {
    std::optional<T> out;
    std::exception_ptr thrown;
    asio::co_spawn(io_, std::move(aw), [&](std::exception_ptr e, T v) {
      thrown = e;
      if (!e) out.emplace(std::move(v));
      io_.stop();  // other work (a test server's accept loop) may stay pending
    });
    io_.restart();
    io_.run();
    if (thrown) std::rethrow_exception(thrown);
    DLOOP_ASSERT_MSG(out.has_value(), "the coroutine did not complete");
    return std::move(*out);
  }

  ToolResult call(std::shared_ptr<Tool> tool, std::string_view args, ToolContext c, InvokeLimits limits = {}) {
    return run(invoke_validated(std::move(tool), J(args), std::move(c), limits));
  }
  ToolResult call(std::shared_ptr<Tool> tool, std::string_view args) { return call(std::move(tool), args, ctx()); }

  asio::io_context& io() { return io_; }
  void set_workspace(std::filesystem::path p) { workspace_ = std::move(p); }

 private:
  asio::io_context io_;
  asio::thread_pool pool_{2};
  std::filesystem::path workspace_;
};

// A fresh directory under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "dloop-tools-XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    DLOOP_ASSERT(made != nullptr);
    path_ = std::filesystem::canonical(made);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& rel) const { return path_ / rel; }

  void write(const std::string& rel, const std::string& content, bool executable = false) const {
    auto p = path_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    if (executable) ::chmod(p.c_str(), 0755);
  }
  std::string read(const std::string& rel) const {
    std::ifstream in(path_ / rel, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  std::filesystem::path path_;
};

inline std::shared_ptr<Tool> builtin(const std::string& use, std::string_view with = "null", BuiltinEnv env = {}) {
  auto t = make_builtin({use, "", "", J(with)}, env);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return t.ok() ? *t : nullptr;
}

inline std::string config_error(const std::string& use, std::string_view with, BuiltinEnv env = {}) {
  auto t = make_builtin({use, "", "", J(with)}, env);
  return t.ok() ? "" : t.status().message();
}

inline bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace dloop::tools::testing

// Expects a failed result of `kind` whose message contains `text`.
#define EXPECT_TOOL_ERROR(result_expr, expected_kind, text)                                  \
  do {                                                                                         \
    const ::dloop::tools::ToolResult& r_ = (result_expr);                                      \
    ASSERT_FALSE(r_.ok()) << r_.value().dump();                                                \
    EXPECT_EQ(::dloop::tools::tool_error_kind_name(r_.error().kind),                           \
              std::string(::dloop::tools::tool_error_kind_name(expected_kind)))                \
        << r_.error().message;                                                                 \
    EXPECT_NE(r_.error().message.find(text), std::string::npos) << r_.error().message;         \
  } while (0)
