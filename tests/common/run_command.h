// Test helper: runs a shell command line and captures its exit code, stdout and stderr. Shared by
// the tests that drive the built `dloop` binary as a user would. Not thread-safe (one temp file
// per process).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

namespace dloop::test {

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

inline Outcome run_command(const std::string& command) {
  const std::string err_file = testing::TempDir() + "/dloop_cmd_stderr_" + std::to_string(getpid()) + ".txt";
  const std::string cmd = command + " 2>" + err_file;
  Outcome o;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while (p && (n = fread(buf.data(), 1, buf.size(), p)) > 0) o.out.append(buf.data(), n);
  const int status = p ? pclose(p) : -1;
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  FILE* e = fopen(err_file.c_str(), "r");
  while (e && (n = fread(buf.data(), 1, buf.size(), e)) > 0) o.err.append(buf.data(), n);
  if (e) fclose(e);
  std::remove(err_file.c_str());
  return o;
}

}  // namespace dloop::test
