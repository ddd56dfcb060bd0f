#include <gtest/gtest.h>

#include "args.h"
#include "commands.h"

namespace dloop::cli {
namespace {

ArgParser make_parser() {
  ArgParser p("generate", "--model FILE --prompt TEXT", "Generate text.");
  p.flag({"model", "FILE", "GGUF model"})
      .flag({"prompt", "TEXT", "prompt"})
      .flag({"temperature", "FLOAT", "sampling temperature", false, "0"})
      .flag({"steps", "N", "denoising steps"})
      .flag({"input", "KEY=VALUE", "an input", true})
      .flag({"raw", "", "no chat template"});
  return p;
}

TEST(Args, ParsesFlagsSwitchesAndPositionals) {
  ArgParser p = make_parser();
  auto r = p.parse({"--model", "m.gguf", "--temperature=0.5", "--raw", "--input", "a=1", "--input", "b=2", "pos"}, 0, 1);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->get("model"), "m.gguf");
  EXPECT_DOUBLE_EQ(r->get_double("temperature", 0).value(), 0.5);
  EXPECT_TRUE(r->has("raw"));
  EXPECT_EQ(r->all("input"), (std::vector<std::string>{"a=1", "b=2"}));
  EXPECT_EQ(r->positional(), (std::vector<std::string>{"pos"}));
  EXPECT_EQ(r->get_int("steps", 64, 1, 4096).value(), 64);
}

TEST(Args, Errors) {
  ArgParser p = make_parser();
  EXPECT_EQ(p.parse({"--temprature", "1"}, 0, 0).status().message(),
            "unknown flag '--temprature' (did you mean '--temperature'?)");
  EXPECT_EQ(p.parse({"--model"}, 0, 0).status().message(), "missing value for '--model' (FILE)");
  EXPECT_EQ(p.parse({"--model", "a", "--model", "b"}, 0, 0).status().message(), "flag '--model' given more than once");
  EXPECT_EQ(p.parse({"--raw=1"}, 0, 0).status().message(), "flag '--raw' takes no value");
  EXPECT_EQ(p.parse({"x", "y"}, 0, 1).status().message(), "unexpected argument 'y'");
  EXPECT_EQ(p.parse({}, 1, 1).status().message(), "missing argument: --model FILE --prompt TEXT");
  EXPECT_EQ(p.parse({"-x"}, 0, 0).status().message(), "unknown flag '-x' (flags are spelled --name)");
  auto bad_num = p.parse({"--temperature", "hot"}, 0, 0);
  ASSERT_TRUE(bad_num.ok());
  EXPECT_EQ(bad_num->get_double("temperature", 0).status().message(), "--temperature: expected a number, got 'hot'");
  auto bad_int = p.parse({"--steps", "0"}, 0, 0);
  EXPECT_EQ(bad_int->get_int("steps", 1, 1, 10).status().message(), "--steps: 0 is out of range [1, 10]");
}

TEST(Args, HelpText) {
  ArgParser p = make_parser();
  auto r = p.parse({"--model", "x", "--help"}, 0, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(p.help_requested());
  std::string u = p.usage();
  EXPECT_NE(u.find("usage: dloop generate --model FILE --prompt TEXT"), std::string::npos);
  EXPECT_NE(u.find("--temperature FLOAT"), std::string::npos);
  EXPECT_NE(u.find("(default: 0)"), std::string::npos);
}

TEST(Commands, PlannedVerbsExitTwo) {
  for (const auto& c : planned_commands()) {
    testing::internal::CaptureStderr();
    int code = dispatch({c.name});
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(code, kExitUsage) << c.name;
    EXPECT_NE(err.find("not implemented yet"), std::string::npos) << c.name;
  }
}

}  // namespace
}  // namespace dloop::cli
