// Runs the real `dloop` binary and checks exit codes, stdout and stderr.
#include <gtest/gtest.h>

#include "../common/run_command.h"

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace {

using dloop::test::Outcome;

Outcome run_dloop(const std::string& args) {
  return dloop::test::run_command(std::string(DLOOP_BINARY) + " " + args);
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
