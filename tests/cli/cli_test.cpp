// Runs the real `dloop` binary and checks exit codes, stdout and stderr.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace {

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

Outcome run_dloop(const std::string& args) {
  std::string err_file = testing::TempDir() + "/dloop_cli_stderr.txt";
  std::string cmd = std::string(DLOOP_BINARY) + " " + args + " 2>" + err_file;
  Outcome o;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.out.append(buf.data(), n);
  int status = pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  FILE* e = fopen(err_file.c_str(), "r");
  while (e && (n = fread(buf.data(), 1, buf.size(), e)) > 0) o.err.append(buf.data(), n);
  if (e) fclose(e);
  return o;
}

TEST(Cli, HelpListsVerbs) {
  Outcome o = run_dloop("--help");
  EXPECT_EQ(o.code, 0);
  for (const char* verb : {"run", "resume", "replay", "runs", "trace", "serve", "generate", "validate", "bench"}) {
    EXPECT_NE(o.out.find(std::string("  ") + verb + " "), std::string::npos) << verb;
  }
  EXPECT_NE(o.out.find("usage: dloop"), std::string::npos);
}

TEST(Cli, Version) {
  Outcome o = run_dloop("--version");
  EXPECT_EQ(o.code, 0);
  EXPECT_EQ(o.out.rfind("dloop ", 0), 0u);
}

TEST(Cli, NoArgumentsIsUsageError) {
  Outcome o = run_dloop("");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("usage: dloop"), std::string::npos);
}

TEST(Cli, UnknownCommandSuggests) {
  Outcome o = run_dloop("serv");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("unknown command 'serv' (did you mean 'serve'?)"), std::string::npos) << o.err;
}

TEST(Cli, UnknownGlobalFlag) {
  Outcome o = run_dloop("--frobnicate");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("unknown flag '--frobnicate'"), std::string::npos) << o.err;
}

TEST(Cli, LogLevelNeedsAValidValue) {
  Outcome missing = run_dloop("--log-level");
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("missing value for '--log-level'"), std::string::npos) << missing.err;
  Outcome bad = run_dloop("--log-level loud --version");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("bad --log-level 'loud'"), std::string::npos) << bad.err;
  Outcome good = run_dloop("--log-level debug --version");
  EXPECT_EQ(good.code, 0);
}

}  // namespace
