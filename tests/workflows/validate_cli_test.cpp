// `dloop validate` as a program: exit codes, the file:line:column lines, the summary and --json.
#include <gtest/gtest.h>

#include "../common/run_command.h"

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

#include "dloop/base/json.h"

namespace {

using dloop::test::Outcome;

// Runs `dloop validate ARGS`.
Outcome run_validate(const std::string& args) {
  return dloop::test::run_command(std::string(DLOOP_BINARY) + " validate " + args);
}

const std::string kData = std::string(DLOOP_SOURCE_DIR) + "/tests/workflows/data/";

TEST(ValidateCli, ValidFilesExitZero) {
  Outcome o = run_validate(kData + "triage.yaml " + kData + "loops.yaml");
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_EQ(o.out, kData + "triage.yaml: ok\n" + kData + "loops.yaml: ok\n");
}

TEST(ValidateCli, InvalidFileListsEveryProblemAndExitsTwo) {
  Outcome o = run_validate(kData + "invalid/many_errors.yaml " + kData + "minimal.yaml");
  EXPECT_EQ(o.code, 2);
  const std::string f = kData + "invalid/many_errors.yaml";
  EXPECT_EQ(o.out.rfind(f + ":2:1: error: unknown key 'stpes' in workflow (did you mean 'steps'?)\n", 0), 0u) << o.out;
  EXPECT_NE(o.out.find(f + ":23:5: error: missing required key 'max_iterations'"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(f + ": 13 errors\n" + kData + "minimal.yaml: ok\n"), std::string::npos) << o.out;
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 15);
}

TEST(ValidateCli, SyntaxErrorAndMissingFile) {
  Outcome o = run_validate(kData + "invalid/syntax.yaml");
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.out, kData + "invalid/syntax.yaml:6:1: error: YAML syntax error: end of map flow not found\n" + kData +
                       "invalid/syntax.yaml: 1 error\n");
  Outcome missing = run_validate(kData + "nope.yaml");
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.out.rfind(kData + "nope.yaml: error: cannot open the file: ", 0), 0u) << missing.out;
}

TEST(ValidateCli, JsonOutput) {
  Outcome o = run_validate("--json " + kData + "invalid/many_errors.yaml " + kData + "minimal.yaml");
  EXPECT_EQ(o.code, 2);
  auto j = dloop::base::Json::parse(o.out);
  ASSERT_TRUE(j.ok()) << o.out;
  EXPECT_FALSE(j->find("valid")->as_bool());
  const auto& files = j->find("files")->as_array();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_FALSE(files[0].find("valid")->as_bool());
  const auto& diags = files[0].find("diagnostics")->as_array();
  ASSERT_EQ(diags.size(), 13u);
  EXPECT_EQ(diags[0].find("line")->as_int(), 2);
  EXPECT_EQ(diags[0].find("column")->as_int(), 1);
  EXPECT_EQ(diags[0].find("message")->as_string(), "unknown key 'stpes' in workflow (did you mean 'steps'?)");
  EXPECT_TRUE(files[1].find("valid")->as_bool());
  EXPECT_EQ(files[1].find("diagnostics")->size(), 0u);
  Outcome ok = run_validate("--json " + kData + "minimal.yaml");
  EXPECT_EQ(ok.code, 0);
}

TEST(ValidateCli, BuiltinToolNamesAreChecked) {
  const std::string path = testing::TempDir() + "/dloop_validate_builtin.yaml";
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("name: t\ntools: [{use: file_wirte}]\nsteps: [{id: a, tool: file_wirte}]\n", f);
  fclose(f);
  Outcome o = run_validate(path);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.out.find(path + ":2:15: error: unknown built-in tool 'file_wirte' (did you mean 'file_write'?)"),
            std::string::npos)
      << o.out;
}

TEST(ValidateCli, Usage) {
  Outcome none = run_validate("");
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("see 'dloop validate --help'"), std::string::npos) << none.err;
  Outcome help = run_validate("--help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--json"), std::string::npos);
  Outcome flag = run_validate("--jsn x.yaml");
  EXPECT_EQ(flag.code, 2);
  EXPECT_NE(flag.err.find("--json"), std::string::npos) << flag.err;
}

}  // namespace
