// Test helper: installs the MCP packages the e2e tests use from the npm registry, with the
// machine's Node.js, into <build>/npm-cache (once; a file lock serialises parallel tests).
// Pinned versions, so runs are reproducible.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../common/run_command.h"

namespace dloop::test {

inline std::string npm_dir() {
  return (std::filesystem::path(DLOOP_BINARY).parent_path() / "npm-cache").string();
}

// "" when the packages are there; else what went wrong (the install log).
inline std::string ensure_npm_packages() {
  const std::string dir = npm_dir();
  const std::string stamp = ".installed-1";
  const std::string cmd =
      "mkdir -p '" + dir + "' && cd '" + dir + "' && flock .lock sh -c 'test -f " + stamp +
      " || (npm install --no-audit --no-fund --loglevel=error --prefix . "
      "@modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31 "
      "@modelcontextprotocol/sdk@1.32.2 > install.log 2>&1 && touch " + stamp + ")'";
  Outcome o = run_command(cmd);
  if (o.code == 0) return "";
  std::ifstream log(dir + "/install.log");
  std::string text((std::istreambuf_iterator<char>(log)), {});
  return "npm install failed (exit " + std::to_string(o.code) + "; needs node and npm: scripts/install-deps): " +
         o.err + text;
}

inline std::string npm_bin(const std::string& name) { return npm_dir() + "/node_modules/.bin/" + name; }

}  // namespace dloop::test
