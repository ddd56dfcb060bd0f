// The official `openai` npm client against `dloop serve` on the bundled model, on a free loopback
// port: plain chat, a tool-call round trip, json_schema, streaming with tool-call deltas, the
// diffusing stream, and errors (openai_e2e.mjs). The client is installed from the npm registry
// with the machine's Node.js into <build>/npm/openai (scripts/install-deps installs nodejs and
// npm). The server must shut down cleanly on SIGTERM afterwards (exit 0). Label: e2e.
#include <gtest/gtest.h>

#include <filesystem>

#include "../common/run_command.h"
#include "serve_process.h"

namespace dloop::test {
namespace {

namespace fs = std::filesystem;
constexpr const char* kOpenAiVersion = "6.30.1";  // works on Debian 12's Node.js 18

std::string install_client() {
  const fs::path dir = fs::path(DLOOP_BINARY).parent_path() / "npm" / "openai";
  const fs::path marker = dir / "node_modules" / "openai" / "package.json";
  if (fs::exists(marker)) {
    Outcome v = run_command("node -p \"require('" + marker.string() + "').version\"");
    if (v.code == 0 && v.out.find(kOpenAiVersion) == 0) return dir.string();
  }
  fs::create_directories(dir);
  Outcome o = run_command("npm install --no-audit --no-fund --loglevel=error --prefix '" + dir.string() + "' openai@" +
                          kOpenAiVersion);
  EXPECT_EQ(o.code, 0) << "npm install openai failed:\n" << o.out << o.err;
  return dir.string();
}

TEST(OpenAiClient, DrivesTheServer) {
  Outcome node = run_command("node --version");
  ASSERT_EQ(node.code, 0) << "Node.js is missing; scripts/install-deps installs it";
  const std::string modules = install_client();
  ASSERT_FALSE(HasFailure());
  const fs::path tmp = fs::path(testing::TempDir()) / (std::string("dloop_openai_e2e_").append(std::to_string(getpid())));
  fs::create_directories(tmp);
  ServeProcess serve({"--model", std::string(DLOOP_SOURCE_DIR) + "/models/default.gguf", "--db",
                      (tmp / "state.db").string(), "--threads", "2"},
                     (tmp / "serve.log").string());
  ASSERT_GT(serve.port(), 0);
  Outcome r = run_command("node '" + std::string(DLOOP_SOURCE_DIR) + "/tests/server/openai_e2e.mjs' " + serve.url() +
                          " '" + modules + "'");
  std::printf("%s", r.out.c_str());
  EXPECT_EQ(r.code, 0) << r.out << r.err << "\nserver log:\n" << serve.log();
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos);
  EXPECT_EQ(serve.stop(), 0) << serve.log();
}

}  // namespace
}  // namespace dloop::test
