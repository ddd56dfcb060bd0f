// `--device` and `dloop bench cuda` as a user sees them, in every build: a CPU-only build says it
// has no CUDA backend (exit 1); a CUDA build on a machine without a GPU says no device was found
// (exit 1); with a GPU, generation on the device succeeds (its answers are checked against the
// CPU in forward_test.cpp).
#include <gtest/gtest.h>

#include <string>

#include "../common/run_command.h"
#include "dloop/engine/device.h"

namespace {

dloop::test::Outcome dloop_cmd(const std::string& args) {
  return dloop::test::run_command(std::string(DLOOP_BINARY) + " " + args);
}

const std::string kModel = std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/llada-f32.gguf";

TEST(DeviceCli, UnknownDeviceIsAUsageError) {
  auto o = dloop_cmd("generate --device tpu --prompt hi --model " + kModel);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--device: unknown device 'tpu'"), std::string::npos) << o.err;
}

TEST(DeviceCli, CudaDeviceWorksOrSaysWhyNot) {
  auto o = dloop_cmd("generate --device cuda --raw --prompt hi --gen-length 8 --block-length 8 --model " + kModel);
#if DLOOP_TEST_HAVE_CUDA
  if (o.code == 1) {
    EXPECT_NE(o.err.find("no CUDA device found"), std::string::npos) << o.err;
  } else {
    EXPECT_EQ(o.code, 0) << o.err;
  }
#else
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.err.find("this build has no CUDA backend"), std::string::npos) << o.err;
#endif
}

TEST(DeviceCli, BenchCudaHasHelpAndNamesWhatIsMissing) {
  auto help = dloop_cmd("bench cuda --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--prefix"), std::string::npos);
  auto bad = dloop_cmd("bench cuda --type q5_1");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--type: unknown type 'q5_1'"), std::string::npos) << bad.err;
#if !DLOOP_TEST_HAVE_CUDA
  auto none = dloop_cmd("bench cuda --model " + kModel);
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.err.find("this build has no CUDA backend"), std::string::npos) << none.err;
#endif
}

TEST(DeviceCli, ParseDevice) {
  EXPECT_EQ(dloop::engine::parse_device("cpu"), dloop::engine::Device::kCpu);
  EXPECT_EQ(dloop::engine::parse_device("cuda"), dloop::engine::Device::kCuda);
  EXPECT_FALSE(dloop::engine::parse_device("gpu"));
}

}  // namespace
