// libdloop as a user gets it: `cmake --install` of the libdloop component into a temporary
// prefix, then examples/embed configured with find_package(dloop) against that prefix, built,
// and run on the bundled model (a schema-guided tool call, a JSON answer, a workflow run with its
// events). Only the installed header and package are visible to the example. Label: e2e.
#include <gtest/gtest.h>

#include <filesystem>

#include "../common/run_command.h"

namespace dloop::test {
namespace {

namespace fs = std::filesystem;

TEST(Embed, ExampleBuildsAgainstTheInstalledPackage) {
  const fs::path build = fs::path(DLOOP_BINARY).parent_path();
  const fs::path tmp = fs::path(testing::TempDir()) / (std::string("dloop_embed_").append(std::to_string(getpid())));
  fs::remove_all(tmp);
  const fs::path prefix = tmp / "prefix";
  Outcome inst = run_command("cmake --install '" + build.string() + "' --component libdloop --prefix '" +
                             prefix.string() + "'");
  ASSERT_EQ(inst.code, 0) << inst.out << inst.err;
  EXPECT_TRUE(fs::exists(prefix / "include/dloop/dloop.h"));
  EXPECT_TRUE(fs::exists(prefix / "lib/cmake/dloop/dloopConfig.cmake"));
  EXPECT_FALSE(fs::exists(prefix / "include/dloop/engine")) << "internal headers must not be installed";

  const std::string src = std::string(DLOOP_SOURCE_DIR) + "/examples/embed";
  Outcome conf = run_command("cmake -S '" + src + "' -B '" + (tmp / "b").string() + "' -DCMAKE_PREFIX_PATH='" +
                             prefix.string() + "' -DCMAKE_BUILD_TYPE=Release");
  ASSERT_EQ(conf.code, 0) << conf.out << conf.err;
  Outcome make = run_command("cmake --build '" + (tmp / "b").string() + "'");
  ASSERT_EQ(make.code, 0) << make.out << make.err;

  Outcome run = run_command("cd '" + tmp.string() + "' && ./b/embed '" + std::string(DLOOP_SOURCE_DIR) +
                            "/models/default.gguf' '" + src + "/hello.yaml' state.db");
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("tool call: get_weather {\"city\":"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("json answer: {"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("step_started product"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("run_completed"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("completed: {\"product\":42}"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace dloop::test
