// Shared by cmd_bench.cpp and cmd_bench_decode.cpp: the end-to-end decoding part of `dloop bench
// engine` and the `dloop bench batch` verb. Not thread-safe (CLI).
#pragma once

#include <string>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/status.h"
#include "dloop/engine/forwarder.h"

namespace dloop::cli {

struct DecodeBenchOptions {
  int64_t prompt_tokens = 64;   // prompt bytes (about tokens) before the answer
  int64_t gen_length = 256;     // generated tokens per run
  int repeat = 3;               // timed repetitions of each single pass (median)
  int threads = 0;
  std::vector<engine::CacheMode> modes = {engine::CacheMode::kNone, engine::CacheMode::kPrefix, engine::CacheMode::kDual};
};

// Per-pass times (full canvas, prefix step, dual step) and 256-token runs at every reasoning
// preset and cache mode, on the model at `path`.
base::Result<base::Json> bench_decode(const std::string& label, const std::string& path, const DecodeBenchOptions& o);
void print_decode_table(const base::Json& results);

int bench_batch(const std::vector<std::string>& args);
int bench_cache(const std::vector<std::string>& args);  // cmd_bench_cache.cpp

}  // namespace dloop::cli
