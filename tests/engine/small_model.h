// A one-layer random llada model small enough for tool-call tests of the engine's GGUF keys
// (string_slot_test.cpp, member_order_model_test.cpp): written to the test's temp directory.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "dloop/engine/random_model.h"

namespace dloop::engine {

inline RandomModelSpec small_model_spec(int64_t n_ctx) {
  RandomModelSpec spec;
  spec.n_layer = 1;
  spec.n_embd = 64;
  spec.n_head = spec.n_head_kv = 4;
  spec.n_ff = 128;
  spec.n_vocab = 512;
  spec.n_ctx = n_ctx;
  return spec;
}

// Writes `spec` to <temp>/<tag>-<pid>.gguf and returns the path.
inline std::string write_small_model(const RandomModelSpec& spec, const std::string& tag) {
  const std::string path = testing::TempDir() + "/" + tag + "-" + std::to_string(getpid()) + ".gguf";
  EXPECT_TRUE(write_random_model(spec, path).ok());
  return path;
}

}  // namespace dloop::engine
