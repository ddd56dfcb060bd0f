// `dloop bench engine --decode` and `dloop bench batch`: end-to-end decoding figures measured in
// one run against a baseline from the same run.
//  - decode: per model, the time of one forward pass over the full canvas, of one prefix-cache
//    step (the block and the suffix, averaged over the blocks) and of one dual-cache step (the
//    block only), then 256 generated tokens at each reasoning preset's threshold and block length
//    with the cache off, prefix and dual, next to the reference schedule (one token per step, no
//    cache: what llama.cpp's diffusion CLI runs).
//  - batch: N concurrent requests decoded by Engine::generate_batch (one forward pass per step for
//    all of them) for N = 1, 2, 4, 8, 16: requests/s and tokens/s, and the speed-up over N = 1.
// Not thread-safe (CLI).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>

#include "args.h"
#include "bench_decode.h"
#include "commands.h"
#include "dloop/base/json.h"
#include "dloop/base/strings.h"
#include "dloop/engine/engine.h"
#include "dloop/engine/forward_batch.h"
#include "dloop/engine/tool_call.h"
#include "model_path.h"

namespace dloop::cli {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// A prompt of `n` tokens: ChatML turns around printable bytes, so the prompt segments exist.
std::string prompt_text(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string body;
  for (int64_t i = 0; i < n; ++i) body.push_back(static_cast<char>('a' + rng() % 26));
  const size_t half = body.size() / 2;
  return "<|im_start|>system\n" + body.substr(0, half) + "<|im_end|>\n<|im_start|>user\n" + body.substr(half) +
         "<|im_end|>\n<|im_start|>assistant\n";
}

double pass_ms(const engine::Model& m, kernels::ThreadPool& pool, std::span<const int32_t> canvas, int64_t lo,
               int64_t hi, engine::KvRows& kv, engine::BatchState& bs, int repeat) {
  std::vector<int32_t> rows = {static_cast<int32_t>(hi - 1)};
  std::vector<float> logits(static_cast<size_t>(m.config().n_vocab));
  std::vector<double> t;
  for (int i = 0; i <= repeat; ++i) {
    engine::SequencePass p{canvas, lo, hi, static_cast<int64_t>(canvas.size()), &kv, rows, logits.data(), {}};
    auto t0 = Clock::now();
    (void)engine::forward_batch(m, pool, std::span<engine::SequencePass>(&p, 1), bs);
    if (i > 0) t.push_back(ms_since(t0));  // the first is a warm-up
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

base::Result<base::Json> bench_decode(const std::string& label, const std::string& path, const DecodeBenchOptions& o) {
  engine::EngineOptions eo;
  eo.model_path = path;
  eo.threads = o.threads;
  DLOOP_ASSIGN_OR_RETURN(auto eng, engine::Engine::open(eo));
  const engine::Model& m = eng->model();
  const int64_t gen = o.gen_length, block = 32;
  std::vector<int32_t> prompt = eng->tokenizer().encode(prompt_text(o.prompt_tokens, 3), true);
  std::vector<int32_t> canvas = prompt;
  canvas.resize(prompt.size() + static_cast<size_t>(gen), eng->special_tokens().mask);
  const auto t_len = static_cast<int64_t>(canvas.size()), n_prompt = static_cast<int64_t>(prompt.size());
  if (t_len > m.config().n_ctx) return base::invalid_argument(label + ": the canvas exceeds the model's context");
  std::fprintf(stderr, "bench: %s: per-pass times over a %lld-position canvas...\n", label.c_str(),
               static_cast<long long>(t_len));
  engine::KvRows kv(m.config(), t_len);
  engine::BatchState bs;
  const double full = pass_ms(m, eng->pool(), canvas, 0, t_len, kv, bs, o.repeat);
  double prefix = 0, dual = 0;
  const int64_t n_blocks = gen / block;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const int64_t lo = n_prompt + b * block;
    prefix += pass_ms(m, eng->pool(), canvas, lo, t_len, kv, bs, std::max(1, o.repeat / 2)) / double(n_blocks);
    dual += pass_ms(m, eng->pool(), canvas, lo, lo + block, kv, bs, std::max(1, o.repeat / 2)) / double(n_blocks);
  }
  base::Json out = base::Json::object();
  out.set("model", label);
  out.set("params_millions", double(m.config().n_params) / 1e6);
  out.set("canvas", t_len);
  out.set("prompt_tokens", n_prompt);
  out.set("threads", eng->pool().size());
  out.set("full_pass_ms", full);
  out.set("prefix_step_ms", prefix);
  out.set("dual_step_ms", dual);
  base::Json runs = base::Json::array();
  struct Config {
    std::string preset;
    std::optional<double> threshold;
    int64_t block;
  };
  std::vector<Config> configs = {{"reference", std::nullopt, block}};
  for (auto effort : {engine::ReasoningEffort::kInstant, engine::ReasoningEffort::kLow, engine::ReasoningEffort::kMedium,
                      engine::ReasoningEffort::kHigh}) {
    const engine::ReasoningPreset& p = engine::reasoning_preset(effort);
    configs.push_back({engine::reasoning_effort_name(effort), p.threshold,
                       gen % p.answer_block_length == 0 ? p.answer_block_length : block});
  }
  double reference_ms = 0;
  for (const Config& cfg : configs) {
    for (engine::CacheMode mode : o.modes) {
      if (cfg.preset == "reference" && mode != engine::CacheMode::kNone) continue;
      engine::GenerateRequest r;
      r.raw_prompt = prompt_text(o.prompt_tokens, 3);
      r.decode.gen_length = gen;
      r.decode.block_length = cfg.block;
      r.decode.steps = gen;
      r.decode.threshold = cfg.threshold;
      r.decode.eos_stop = false;  // exactly `gen` tokens, whatever the weights
      r.decode.cache = mode;
      std::fprintf(stderr, "bench: %s: %s, cache %s...\n", label.c_str(), cfg.preset.c_str(), engine::cache_mode_name(mode));
      auto t0 = Clock::now();
      DLOOP_ASSIGN_OR_RETURN(engine::GenerateResult g, eng->generate(r));
      const double ms = ms_since(t0);
      if (cfg.preset == "reference") reference_ms = ms;
      base::Json j = base::Json::object();
      j.set("preset", cfg.preset);
      j.set("threshold", cfg.threshold ? *cfg.threshold : 0.0);
      j.set("block_length", cfg.block);
      j.set("cache", engine::cache_mode_name(mode));
      j.set("steps", g.steps);
      j.set("total_ms", ms);
      j.set("tokens_per_second", 1000.0 * double(gen) / ms);
      j.set("tokens_per_step", double(gen) / double(std::max<int64_t>(g.steps, 1)));
      j.set("rows_computed_fraction", double(g.forward_stats.rows_computed) / double(std::max<int64_t>(g.forward_stats.rows_canvas, 1)));
      j.set("speedup_vs_reference", reference_ms > 0 ? reference_ms / ms : 1.0);
      runs.push_back(std::move(j));
    }
  }
  out.set("decode", std::move(runs));
  return out;
}

void print_decode_table(const base::Json& results) {
  std::printf("\n%-8s %7s %6s %10s %12s %10s\n", "model", "params", "canvas", "full ms", "prefix step", "dual step");
  for (const auto& r : results.as_array()) {
    std::printf("%-8s %6.1fM %6lld %10.2f %12.2f %10.2f\n", r.find("model")->as_string().c_str(),
                r.find("params_millions")->as_double(), static_cast<long long>(r.find("canvas")->as_int()),
                r.find("full_pass_ms")->as_double(), r.find("prefix_step_ms")->as_double(),
                r.find("dual_step_ms")->as_double());
  }
  std::printf("\n%-8s %-9s %5s %5s %-6s %6s %10s %8s %8s %7s %9s\n", "model", "preset", "thr", "block", "cache", "steps",
              "total ms", "tok/s", "tok/step", "rows", "vs ref");
  for (const auto& r : results.as_array()) {
    for (const auto& d : r.find("decode")->as_array()) {
      std::printf("%-8s %-9s %5.2f %5lld %-6s %6lld %10.1f %8.1f %8.2f %6.0f%% %8.2fx\n", r.find("model")->as_string().c_str(),
                  d.find("preset")->as_string().c_str(), d.find("threshold")->as_double(),
                  static_cast<long long>(d.find("block_length")->as_int()), d.find("cache")->as_string().c_str(),
                  static_cast<long long>(d.find("steps")->as_int()), d.find("total_ms")->as_double(),
                  d.find("tokens_per_second")->as_double(), d.find("tokens_per_step")->as_double(),
                  100 * d.find("rows_computed_fraction")->as_double(), d.find("speedup_vs_reference")->as_double());
    }
  }
}

int bench_batch(const std::vector<std::string>& args) {
  ArgParser p("bench batch", "[options]",
              "Throughput of Engine::generate_batch with 1, 2, 4, 8 and 16 concurrent requests (one forward\n"
              "pass per denoising step for all of them); the speed-up is against the first count measured in\n"
              "the same run. Results are identical to decoding each request alone.");
  p.flag({"model", "PATH", "GGUF model", false, "default"})
      .flag({"concurrency", "LIST", "comma-separated request counts", false, "1,2,4,8,16"})
      .flag({"gen-length", "N", "tokens generated per request", false, "64"})
      .flag({"prompt-tokens", "N", "prompt length (distinct per request)", false, "96"})
      .flag({"effort", "LEVEL", "reasoning preset for the threshold: instant, low, medium, high", false, "low"})
      .flag({"cache", "MODE", "K/V cache: none, prefix, dual", false, "prefix"})
      .flag({"threads", "N", "compute threads", false, "physical cores"})
      .flag({"json", "", "print JSON instead of a table"});
  auto a = p.parse(args, 0, 0);
  if (p.help_requested()) { std::fputs(p.usage().c_str(), stdout); return kExitOk; }
  auto fail = [](const base::Status& s, int code) {
    std::fprintf(stderr, "dloop bench batch: %s\n", s.message().c_str());
    return code;
  };
  if (!a.ok()) return fail(a.status(), kExitUsage);
  auto gen = a->get_int("gen-length", 64, 1, 4096);
  auto plen = a->get_int("prompt-tokens", 96, 1, 8192);
  auto threads = a->get_int("threads", 0, 0, 256);
  if (!gen.ok()) return fail(gen.status(), kExitUsage);
  if (!plen.ok()) return fail(plen.status(), kExitUsage);
  if (!threads.ok()) return fail(threads.status(), kExitUsage);
  auto effort = engine::parse_reasoning_effort(a->get("effort").value_or("low"));
  if (!effort) return fail(base::invalid_argument("--effort: expected instant, low, medium or high"), kExitUsage);
  auto cache = engine::parse_cache_mode(a->get("cache").value_or("prefix"));
  if (!cache) return fail(base::invalid_argument("--cache: expected none, prefix or dual"), kExitUsage);
  std::vector<int> levels;
  for (const std::string& s : base::split(a->get("concurrency").value_or("1,2,4,8,16"), ',')) {
    char* end = nullptr;
    const long v = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || v < 1 || v > 256) {
      return fail(base::invalid_argument("--concurrency: '" + s + "' is not a count in [1, 256]"), kExitUsage);
    }
    levels.push_back(static_cast<int>(v));
  }
  auto path = resolve_model_path(a->get("model").value_or("default"));
  if (!path.ok()) return fail(path.status(), kExitUsage);
  engine::EngineOptions eo;
  eo.model_path = *path;
  eo.threads = static_cast<int>(*threads);
  eo.prompt_cache_bytes = 0;  // every request computes its own prompt: batching alone is measured
  auto eng = engine::Engine::open(eo);
  if (!eng.ok()) return fail(eng.status(), kExitFailed);
  const engine::ReasoningPreset& preset = engine::reasoning_preset(*effort);
  auto make = [&](int i) {
    engine::GenerateRequest r;
    r.raw_prompt = prompt_text(*plen, static_cast<uint64_t>(100 + i));
    r.decode.gen_length = *gen;
    r.decode.block_length = *gen % 32 == 0 ? 32 : 0;
    r.decode.steps = *gen;
    r.decode.threshold = preset.threshold;
    r.decode.eos_stop = false;
    r.decode.cache = *cache;
    return r;
  };
  base::Json rows = base::Json::array();
  double base_tps = 0;
  for (int n : levels) {
    std::vector<engine::GenerateRequest> reqs;
    for (int i = 0; i < n; ++i) reqs.push_back(make(i));
    std::fprintf(stderr, "bench: %d concurrent requests...\n", n);
    auto t0 = Clock::now();
    auto results = (*eng)->generate_batch(reqs);
    const double ms = ms_since(t0);
    int64_t tokens = 0, steps = 0;
    for (auto& r : results) {
      if (!r.ok()) return fail(r.status(), kExitFailed);
      tokens += static_cast<int64_t>(r->output_tokens.size());
      steps = std::max(steps, r->steps);
    }
    const double tps = 1000.0 * double(n) * double(*gen) / ms;
    if (base_tps == 0) base_tps = tps;
    base::Json j = base::Json::object();
    j.set("concurrency", n);
    j.set("wall_ms", ms);
    j.set("requests_per_second", 1000.0 * n / ms);
    j.set("tokens_per_second", tps);
    j.set("max_steps", steps);
    j.set("output_tokens", tokens);
    j.set("speedup_vs_first", tps / base_tps);
    rows.push_back(std::move(j));
  }
  if (a->has("json")) {
    std::printf("%s\n", rows.dump(base::Json::Style::kPretty).c_str());
    return kExitOk;
  }
  std::printf("model %s, %lld prompt + %lld generated tokens per request, preset %s (threshold %.2f), cache %s, %d threads\n",
              path->c_str(), static_cast<long long>(*plen), static_cast<long long>(*gen), engine::reasoning_effort_name(*effort),
              preset.threshold, engine::cache_mode_name(*cache), (*eng)->pool().size());
  std::printf("%11s %10s %10s %10s %8s\n", "concurrency", "wall ms", "req/s", "tok/s", "vs first");
  for (const auto& r : rows.as_array()) {
    std::printf("%11lld %10.1f %10.2f %10.1f %7.2fx\n", static_cast<long long>(r.find("concurrency")->as_int()),
                r.find("wall_ms")->as_double(), r.find("requests_per_second")->as_double(),
                r.find("tokens_per_second")->as_double(), r.find("speedup_vs_first")->as_double());
  }
  return kExitOk;
}

}  // namespace dloop::cli
