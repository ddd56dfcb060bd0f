// `--device` and `dloop bench cuda` as a user sees them, in every build: a CPU-only build says it
// has no CUDA backend (exit 1); a CUDA build on a machine without a GPU says no device was found
// (exit 1); with a GPU, generation on the device succeeds (its answers are checked against the
// CPU in forward_test.cpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
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

// `dloop run` and `dloop serve` take --device too; a workflow may say `device: cuda`.
TEST(DeviceCli, RunAndServeTakeTheDevice) {
  const std::string dir = testing::TempDir() + "/device-cli-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string flow = dir + "/flow.yaml";
  {
    std::ofstream f(flow);
    f << "name: device\ndevice: cuda\nsteps:\n  - id: ask\n    agent:\n      prompt: Say hi.\n      max_turns: 1\n";
  }
  const std::string db = " --db " + dir + "/state.db --model " + kModel;
  auto bad = dloop_cmd("run " + flow + db + " --device tpu");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--device: unknown device 'tpu' (cpu or cuda)"), std::string::npos) << bad.err;
  auto serve = dloop_cmd("serve --port 0 --device tpu --model " + kModel);
  EXPECT_EQ(serve.code, 2);
  EXPECT_NE(serve.err.find("--device: unknown device 'tpu'"), std::string::npos) << serve.err;
  auto cuda = dloop_cmd("run " + flow + db);  // the workflow's device: cuda
#if DLOOP_TEST_HAVE_CUDA
  if (cuda.code == 1) {
    EXPECT_NE((cuda.out + cuda.err).find("no CUDA device found"), std::string::npos) << cuda.err;
  }
#else
  EXPECT_EQ(cuda.code, 1);
  EXPECT_NE(cuda.err.find("--device cuda: this build has no CUDA backend"), std::string::npos) << cuda.err;
  auto served = dloop_cmd("serve --port 0 --device cuda --model " + kModel);
  EXPECT_EQ(served.code, 1);
  EXPECT_NE(served.err.find("this build has no CUDA backend"), std::string::npos) << served.err;
#endif
  // --device cpu overrides the workflow: the run reaches the model (whatever it answers).
  auto cpu = dloop_cmd("run " + flow + db + " --device cpu");
  EXPECT_EQ(cpu.err.find("CUDA"), std::string::npos) << cpu.err;
  EXPECT_NE(cpu.err.find("run "), std::string::npos) << cpu.err;
  std::filesystem::remove_all(dir);
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
