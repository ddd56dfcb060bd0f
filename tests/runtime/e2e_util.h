// Helpers for the runtime's end-to-end tests: run the real `dloop` binary through the shell,
// capture stdout, stderr and the exit code, and read the state database with memory::Store.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "dloop/base/json.h"
#include "dloop/memory/store.h"

namespace dloop::test {

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `prefix DLOOP args` with sh; prefix may set environment variables ("A=1 ").
inline Outcome run_dloop(const std::string& args, const std::string& prefix = "") {
  static int counter = 0;
  std::string err_file = testing::TempDir() + "/dloop_rt_stderr_" + std::to_string(::getpid()) + "_" +
                         std::to_string(counter++) + ".txt";
  std::string cmd = prefix + std::string(DLOOP_BINARY) + " " + args + " 2>" + err_file;
  Outcome o;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.out.append(buf.data(), n);
  int status = pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.err = slurp(err_file);
  std::filesystem::remove(err_file);
  return o;
}

// A fresh empty directory under the test temp dir.
inline std::filesystem::path fresh_dir(const std::string& name) {
  auto d = std::filesystem::path(testing::TempDir()) / ("dloop_rt_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// The run id printed on stderr ("run ID").
inline std::string run_id_from(const std::string& err) {
  auto pos = err.find("run ");
  if (pos == std::string::npos) return "";
  auto end = err.find('\n', pos);
  return err.substr(pos + 4, end - pos - 4);
}

// The model for agent steps: the bundled one when present, else a random-weight test model (its
// agent steps then fail with model_error, which the examples tolerate with continue_on_error).
inline std::string test_model() {
  std::string bundled = std::string(DLOOP_SOURCE_DIR) + "/models/default.gguf";
  if (std::filesystem::exists(bundled)) return bundled;
  return std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/llada-f32.gguf";
}

inline std::unique_ptr<memory::Store> open_db(const std::filesystem::path& db) {
  auto s = memory::Store::open(db.string());
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::move(s).value() : nullptr;
}

}  // namespace dloop::test
