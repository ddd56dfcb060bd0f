#include <gtest/gtest.h>

#include "dloop/base/strings.h"

namespace dloop::base {
namespace {

TEST(Strings, Utf8Validation) {
  EXPECT_EQ(find_invalid_utf8("plain ascii"), std::nullopt);
  EXPECT_EQ(find_invalid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::nullopt);
  EXPECT_EQ(find_invalid_utf8("ab\xff"), 2u);
  EXPECT_EQ(find_invalid_utf8("ab\xc3"), 2u);          // truncated
  EXPECT_EQ(find_invalid_utf8("\xc0\xaf"), 0u);         // overlong
  EXPECT_EQ(find_invalid_utf8("x\xed\xa0\x80"), 1u);    // surrogate
  EXPECT_EQ(find_invalid_utf8("\xf4\x90\x80\x80"), 0u); // > U+10FFFF
}

TEST(Strings, TrimSplit) {
  EXPECT_EQ(trim("  a b \n"), "a b");
  EXPECT_EQ(trim(""), "");
  auto parts = split("a,,b", ',');
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], "a");
  EXPECT_EQ(parts[1], "");
  EXPECT_EQ(parts[2], "b");
  EXPECT_TRUE(starts_with("--flag", "--"));
  EXPECT_TRUE(ends_with("x.gguf", ".gguf"));
  EXPECT_FALSE(ends_with("f", ".gguf"));
}

TEST(Strings, DidYouMean) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(closest_match("genrate", {"run", "generate", "serve"}), "generate");
  EXPECT_EQ(closest_match("zzzzzz", {"run", "generate", "serve"}), std::nullopt);
}

TEST(Strings, Durations) {
  EXPECT_EQ(parse_duration_ms("250ms"), 250);
  EXPECT_EQ(parse_duration_ms("10s"), 10000);
  EXPECT_EQ(parse_duration_ms("2.5s"), 2500);
  EXPECT_EQ(parse_duration_ms("3m"), 180000);
  EXPECT_EQ(parse_duration_ms("1h"), 3600000);
  EXPECT_EQ(parse_duration_ms("7"), 7000);
  EXPECT_EQ(parse_duration_ms("-1s"), std::nullopt);
  EXPECT_EQ(parse_duration_ms("10 parsecs"), std::nullopt);
  EXPECT_EQ(parse_duration_ms(""), std::nullopt);
}

}  // namespace
}  // namespace dloop::base
