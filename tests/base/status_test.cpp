#include <gtest/gtest.h>

#include <memory>

#include "dloop/base/status.h"

namespace dloop::base {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return invalid_argument("value " + std::to_string(v) + " is not positive");
  return v;
}

Result<int> doubled(int v) {
  DLOOP_ASSIGN_OR_RETURN(int x, parse_positive(v));
  return x * 2;
}

Status check(int v) {
  DLOOP_RETURN_IF_ERROR(parse_positive(v).status());
  return Status();
}

TEST(Status, OkAndError) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.to_string(), "ok");
  Status bad = not_found("tensor 'blk.0.attn_q.weight'");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), Code::kNotFound);
  EXPECT_EQ(bad.to_string(), "not_found: tensor 'blk.0.attn_q.weight'");
  EXPECT_EQ(bad.with_context("model.gguf").message(), "model.gguf: tensor 'blk.0.attn_q.weight'");
  EXPECT_TRUE(ok.with_context("x").ok());
}

TEST(Result, ValueAndPropagation) {
  EXPECT_EQ(doubled(21).value(), 42);
  auto r = doubled(-1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "value -1 is not positive");
  EXPECT_TRUE(check(3).ok());
  EXPECT_EQ(check(0).message(), "value 0 is not positive");
}

TEST(Result, MoveOnlyValue) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

TEST(ResultDeathTest, ValueOfErrorAborts) {
  Result<int> r = io_error("disk");
  EXPECT_DEATH((void)r.value(), "value\\(\\) of an error Result");
}

}  // namespace
}  // namespace dloop::base
