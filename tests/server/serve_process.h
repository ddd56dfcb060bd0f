// Test helper: runs `dloop serve --port 0 ...` as a child process, waits for its
// "listening on http://127.0.0.1:PORT" line on stderr and parses the port; stop() sends SIGTERM
// and returns the exit status (SIGKILL after a timeout, reported as -1). Not thread-safe.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace dloop::test {

class ServeProcess {
 public:
  ServeProcess(const std::vector<std::string>& extra_args, const std::string& log_path) : log_(log_path) {
    std::vector<std::string> args = {DLOOP_BINARY, "serve", "--port", "0"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = freopen(log_path.c_str(), "w", stderr);
      (void)f;
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      const std::string text = log();
      const auto at = text.find("listening on http://127.0.0.1:");
      if (at != std::string::npos && text.find('\n', at) != std::string::npos) {
        port_ = static_cast<uint16_t>(std::stoi(text.substr(at + 30)));
        return;
      }
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        ADD_FAILURE() << "dloop serve exited during start-up:\n" << text;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "dloop serve did not start within 60 s:\n" << log();
  }
  ~ServeProcess() { stop(); }

  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string url() const { return std::string("http://127.0.0.1:").append(std::to_string(port_)); }
  std::string log() const {
    std::ifstream in(log_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Resident set size of the server in KiB (from /proc), 0 when it is not running.
  long rss_kib() const {
    std::ifstream in(std::string("/proc/").append(std::to_string(pid_)).append("/status"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    }
    return 0;
  }
  int stop() {
    if (pid_ <= 0) return exit_code_;
    kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) != pid_) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        pid_ = -1;
        exit_code_ = -1;
        return exit_code_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exit_code_;
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  int exit_code_ = -1;
};

}  // namespace dloop::test
