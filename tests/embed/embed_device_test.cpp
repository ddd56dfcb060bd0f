// libdloop's Model::open with a device: "cpu" opens and chats, an unknown name is an error that
// names it, and "cuda" either opens (a CUDA build on a GPU machine) or says why not.
#include <gtest/gtest.h>

#include <string>

#include "dloop/dloop.h"

namespace {

const std::string kModel = std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/llada-f32.gguf";

TEST(EmbedDevice, OpenNamesTheDevice) {
  std::string error;
  auto cpu = dloop::Model::open(kModel, &error, 1, "cpu");
  ASSERT_NE(cpu, nullptr) << error;
  EXPECT_EQ(dloop::Model::open(kModel, &error, 1, "tpu"), nullptr);
  EXPECT_EQ(error, "unknown device 'tpu' (cpu or cuda)");
  error.clear();
  auto cuda = dloop::Model::open(kModel, &error, 1, "cuda");
  if (cuda == nullptr) {
    EXPECT_TRUE(error.find("no CUDA device found") != std::string::npos ||
                error.find("this build has no CUDA backend") != std::string::npos)
        << error;
  }
}

}  // namespace
