#include <gtest/gtest.h>

#include "dloop/base/log.h"

namespace dloop::base {
namespace {

TEST(Log, ParseLevels) {
  EXPECT_EQ(parse_log_level("DEBUG"), LogLevel::kDebug);
  EXPECT_EQ(parse_log_level("warning"), LogLevel::kWarn);
  EXPECT_EQ(parse_log_level("off"), LogLevel::kOff);
  EXPECT_EQ(parse_log_level("loud"), std::nullopt);
}

TEST(Log, FiltersByLevelAndFormatsLines) {
  LogLevel saved = log_level();
  set_log_level(LogLevel::kInfo);
  EXPECT_FALSE(log_enabled(LogLevel::kDebug));
  EXPECT_TRUE(log_enabled(LogLevel::kError));
  testing::internal::CaptureStderr();
  DLOOP_DEBUG("hidden ", 1);
  DLOOP_INFO("loaded ", 3, " tensors");
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "[dloop] INFO loaded 3 tensors\n");
  set_log_level(LogLevel::kOff);
  EXPECT_FALSE(log_enabled(LogLevel::kError));
  set_log_level(saved);
}

}  // namespace
}  // namespace dloop::base
