// `dloop bench cuda`: the CUDA backend on a random-weight model written on first use (default: the
// LLaDA-8B shape, bf16, 16 GB). Measures, on the GPU, the time of one denoising step
//  - without cache: the whole canvas (prefix + answer, 1,280 positions) through the layers;
//  - with a prefix cache: only the 32-position block, attending to the cached K/V of the 1,024
//    positions before it (plus the block's refresh pass, which recomputes everything);
// each step returning only the per-position token choice (16 bytes a row) to the host; then
// tokens/s at 1, 2 and 4 tokens committed per step, and the floor those steps have on this GPU:
// reading every weight once from device memory (weight bytes / measured device copy bandwidth);
// then the cached step of 4 requests batched into one device pass (DeviceBatch), next to 4 times
// one request's step.
// Uses only device.h (no CUDA headers): in a build without the CUDA backend it says so, exit 1.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "args.h"
#include "commands.h"
#include "dloop/engine/device.h"
#include "dloop/engine/gguf.h"
#include "dloop/engine/model.h"
#include "dloop/engine/random_model.h"

namespace dloop::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct CudaBenchOptions {
  std::string model;      // a GGUF path, or empty for the preset
  std::string preset = "llada-8b";
  kernels::DType type = kernels::DType::kBF16;
  std::string cache_dir = "/tmp/dloop-bench";
  int64_t prefix = 1024;  // cached prefix positions
  int64_t block = 32;     // block positions (the rows whose tokens are chosen)
  int64_t canvas = 1280;  // positions of the no-cache pass
  int repeat = 10;
};

base::Result<std::string> model_file(const CudaBenchOptions& o) {
  if (!o.model.empty()) return o.model;
  auto spec = engine::random_model_preset(o.preset);
  if (!spec) return base::invalid_argument("--preset: unknown model preset '" + o.preset + "'");
  spec->type = o.type;
  namespace fs = std::filesystem;
  fs::create_directories(o.cache_dir);
  const std::string path = o.cache_dir + "/random-" + o.preset + "-" + kernels::dtype_info(o.type).name + ".gguf";
  if (!fs::exists(path)) {
    std::fprintf(stderr, "bench cuda: writing %s (%.0fM parameters)...\n", path.c_str(), double(spec->n_params()) / 1e6);
    DLOOP_RETURN_IF_ERROR(engine::write_random_model(*spec, path + ".tmp"));
    fs::rename(path + ".tmp", path);
  }
  return path;
}

// Median wall time of `repeat` calls of f (after one warm-up call), in ms; the first error ends it.
template <typename F>
base::Result<double> median_ms(int repeat, F&& f) {
  DLOOP_RETURN_IF_ERROR(f());
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = Clock::now();
    DLOOP_RETURN_IF_ERROR(f());
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

constexpr int kBatch = 4;  // requests in the batched measurement

struct Figures {
  std::string device, model;
  double weight_gb = 0, pass_gb = 0, bandwidth_gbs = 0, floor_ms = 0;
  double nocache_ms = 0, refresh_ms = 0, cached_ms = 0, cached_logits_ms = 0;
  double graph_nocache_ms = 0, graph_cached_ms = 0;  // 0: not measured
  double batched_ms = 0;                             // one step of kBatch requests together
  std::string graph_error;                          // why the CUDA-graph rows are missing
};

base::Result<Figures> measure(const CudaBenchOptions& o) {
  DLOOP_ASSIGN_OR_RETURN(std::string path, model_file(o));
  DLOOP_ASSIGN_OR_RETURN(auto file, engine::GgufFile::open(path));
  std::shared_ptr<const engine::GgufFile> shared = std::move(file);
  DLOOP_ASSIGN_OR_RETURN(auto model, engine::Model::load(shared));
  const engine::ModelConfig& c = model->config();
  if (o.prefix + o.block > c.n_ctx || o.canvas > c.n_ctx) return base::invalid_argument("canvas longer than the model's context");
  if (o.prefix + o.block > o.canvas) return base::invalid_argument("--canvas must hold --prefix + --block positions");
  std::fprintf(stderr, "bench cuda: uploading %s...\n", path.c_str());
  DLOOP_ASSIGN_OR_RETURN(auto dev, engine::open_device_model(engine::Device::kCuda, *model));
  Figures f;
  f.device = dev->description();
  f.model = std::filesystem::path(path).filename().string();
  f.weight_gb = static_cast<double>(dev->weight_bytes()) / 1e9;
  DLOOP_ASSIGN_OR_RETURN(double bw, dev->copy_bandwidth(uint64_t{1} << 30));
  f.bandwidth_gbs = bw / 1e9;
  f.pass_gb = static_cast<double>(dev->pass_weight_bytes()) / 1e9;
  f.floor_ms = static_cast<double>(dev->pass_weight_bytes()) / bw * 1e3;

  std::mt19937 rng(7);
  std::vector<int32_t> canvas(static_cast<size_t>(o.canvas));
  for (auto& t : canvas) t = static_cast<int32_t>(rng() % 256);
  std::vector<int32_t> block;  // the block right after the prefix
  for (int64_t i = o.prefix; i < o.prefix + o.block; ++i) block.push_back(static_cast<int32_t>(i));
  std::vector<engine::TokenChoice> choices(block.size());
  engine::ChoiceOptions mask;  // greedy, the last id standing in for the mask token
  mask.exclude = static_cast<int32_t>(c.n_vocab - 1);

  std::fprintf(stderr, "bench cuda: no-cache steps over %lld positions...\n", static_cast<long long>(o.canvas));
  auto plain = dev->make_forwarder(engine::CacheMode::kNone);
  DLOOP_ASSIGN_OR_RETURN(f.nocache_ms, median_ms(o.repeat, [&] {
    return plain->forward_choices(canvas, block, mask, choices.data(), engine::PassHint{});
  }));

  // Prefix cache over prefix + block positions: a refresh pass, then steps that recompute the block.
  std::fprintf(stderr, "bench cuda: cached steps (%lld-position block after %lld cached)...\n",
               static_cast<long long>(o.block), static_cast<long long>(o.prefix));
  const std::span<const int32_t> short_canvas(canvas.data(), static_cast<size_t>(o.prefix + o.block));
  auto cached = dev->make_forwarder(engine::CacheMode::kPrefix);
  engine::PassHint refresh;
  refresh.refresh = true;
  refresh.stable_end = o.prefix;
  DLOOP_ASSIGN_OR_RETURN(f.refresh_ms, median_ms(std::max(2, o.repeat / 3), [&] {
    return cached->forward_choices(short_canvas, block, mask, choices.data(), refresh);
  }));
  engine::PassHint step;
  step.stable_end = o.prefix;
  DLOOP_ASSIGN_OR_RETURN(f.cached_ms, median_ms(o.repeat, [&] {
    return cached->forward_choices(short_canvas, block, mask, choices.data(), step);
  }));
  std::vector<float> logits(block.size() * static_cast<size_t>(c.n_vocab));
  DLOOP_ASSIGN_OR_RETURN(f.cached_logits_ms, median_ms(o.repeat, [&] {
    return cached->forward(short_canvas, block, logits.data(), step);
  }));
  if (cached->stats().rows_computed <= 0) return base::internal_error("bench cuda: the cached forwarder computed nothing");

  // kBatch requests (different canvases), each with a prefix cache, stepping together: every step
  // is one device pass over kBatch blocks. Request 0 times its steps (all wait for each other).
  std::fprintf(stderr, "bench cuda: cached steps of %d requests batched...\n", kBatch);
  {
    auto batch = dev->make_batch(kBatch);
    std::vector<base::Status> status(kBatch);
    std::vector<double> times;
    std::vector<std::thread> threads;
    for (int r = 0; r < kBatch; ++r) {
      threads.emplace_back([&, r] {
        std::vector<int32_t> mine(short_canvas.begin(), short_canvas.end());
        std::rotate(mine.begin(), mine.begin() + r * 7, mine.end());
        std::vector<engine::TokenChoice> out(block.size());
        engine::DeviceForwarderOptions fo;
        fo.mode = engine::CacheMode::kPrefix;
        fo.batch = batch.get();
        auto fw = dev->make_forwarder(fo);
        base::Status s = fw->forward_choices(mine, block, mask, out.data(), refresh);
        for (int i = 0; s.ok() && i <= o.repeat; ++i) {
          const auto t0 = Clock::now();
          s = fw->forward_choices(mine, block, mask, out.data(), step);
          if (r == 0 && i > 0) times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        }
        status[static_cast<size_t>(r)] = s;
        batch->leave();
      });
    }
    for (auto& t : threads) t.join();
    for (const auto& s : status) DLOOP_RETURN_IF_ERROR(s);
    if (times.empty() || batch->stats().max_batch != kBatch) {
      return base::internal_error("bench cuda: the batched steps did not run together");
    }
    std::sort(times.begin(), times.end());
    f.batched_ms = times[times.size() / 2];
  }

  // The same steps replayed from CUDA graphs; a failure here leaves the figures above standing.
  std::fprintf(stderr, "bench cuda: the same steps from CUDA graphs...\n");
  dev->set_graphs(true);
  auto g_cached = median_ms(o.repeat, [&] {
    return cached->forward_choices(short_canvas, block, mask, choices.data(), step);
  });
  auto g_plain = median_ms(o.repeat, [&] {
    return plain->forward_choices(canvas, block, mask, choices.data(), engine::PassHint{});
  });
  dev->set_graphs(false);
  if (g_cached.ok() && g_plain.ok()) {
    f.graph_cached_ms = *g_cached;
    f.graph_nocache_ms = *g_plain;
  } else {
    f.graph_error = (g_cached.ok() ? g_plain.status() : g_cached.status()).message();
  }
  return f;
}

std::string table(const Figures& f, const CudaBenchOptions& o) {
  std::ostringstream s;
  char line[256];
  s << "device: " << f.device << "\nmodel: " << f.model << "\n";
  std::snprintf(line, sizeof line,
                "weights %.2f GB (%.2f GB read per pass: all but the embedding table), device copy bandwidth\n"
                "%.0f GB/s (read + write), HBM floor %.2f ms per pass (bytes read per pass / bandwidth)\n\n",
                f.weight_gb, f.pass_gb, f.bandwidth_gbs, f.floor_ms);
  s << line;
  std::snprintf(line, sizeof line, "%-44s %9s %9s %9s %9s %8s\n", "step", "ms", "tok/s k=1", "tok/s k=2", "tok/s k=4",
                "x floor");
  s << line;
  const auto row = [&](const std::string& what, double ms) {
    std::snprintf(line, sizeof line, "%-44s %9.2f %9.0f %9.0f %9.0f %8.2f\n", what.c_str(), ms, 1e3 / ms, 2e3 / ms,
                  4e3 / ms, ms / f.floor_ms);
    s << line;
  };
  row("no cache, " + std::to_string(o.canvas) + " positions", f.nocache_ms);
  row("cached, " + std::to_string(o.block) + " rows after " + std::to_string(o.prefix), f.cached_ms);
  row("cached, same, all logits to the host", f.cached_logits_ms);
  row("refresh pass, " + std::to_string(o.prefix + o.block) + " positions", f.refresh_ms);
  std::snprintf(line, sizeof line, "%-44s %9.2f %9.0f %9.0f %9.0f %8.2f\n",
                ("cached, " + std::to_string(kBatch) + " requests batched (tok/s: all)").c_str(), f.batched_ms,
                kBatch * 1e3 / f.batched_ms, kBatch * 2e3 / f.batched_ms, kBatch * 4e3 / f.batched_ms,
                f.batched_ms / f.floor_ms);
  s << line;
  if (f.graph_error.empty()) {
    row("no cache, CUDA graph", f.graph_nocache_ms);
    row("cached, CUDA graph", f.graph_cached_ms);
  } else {
    s << "CUDA graphs failed: " << f.graph_error << "\n";
  }
  // A block of `block` tokens at k tokens per step: one refresh pass, then block/k - 1 cached steps.
  s << "\nper block of " << o.block << " tokens (one refresh + cached steps):";
  for (int k : {1, 2, 4}) {
    const double steps = static_cast<double>(o.block) / k;
    const double ms = f.refresh_ms + (steps - 1) * f.cached_ms;
    std::snprintf(line, sizeof line, "  k=%d %.0f tok/s", k, static_cast<double>(o.block) / ms * 1e3);
    s << line;
  }
  std::snprintf(line, sizeof line, "\nbatching: %d requests' cached steps in one pass take %.2fx one request's step (%.2fx if run one after another)\n",
                kBatch, f.batched_ms / f.cached_ms, static_cast<double>(kBatch));
  s << line;
  return s.str();
}

}  // namespace

int bench_cuda(const std::vector<std::string>& args) {
  ArgParser p("bench cuda", "[options]",
              "Denoising-step time of the CUDA backend on a random-weight model (default: LLaDA-8B shape,\n"
              "bf16, written to --cache-dir on first use): without cache over the whole canvas, and with a\n"
              "prefix cache for one block; tokens/s at 1, 2 and 4 tokens per step, next to the floor of\n"
              "reading the weights once at the measured device copy bandwidth. Needs a CUDA build and GPU.");
  p.flag({"model", "PATH", "a GGUF file instead of a random preset", false, ""})
      .flag({"preset", "NAME", "random model preset: tiny, small, 0.5b, llada-8b", false, "llada-8b"})
      .flag({"type", "TYPE", "weight type of the preset: f32, f16, bf16, q8_0", false, "bf16"})
      .flag({"cache-dir", "DIR", "where the random model is written", false, "/tmp/dloop-bench"})
      .flag({"prefix", "N", "cached positions before the block", false, "1024"})
      .flag({"block", "N", "block positions", false, "32"})
      .flag({"canvas", "N", "positions of the no-cache pass", false, "1280"})
      .flag({"repeat", "N", "timed repetitions (median reported)", false, "10"})
      .flag({"out", "FILE", "also write the table to FILE", false, ""})
      .flag({"write-only", "", "only write the random model file (no GPU needed), then exit"});
  auto a = p.parse(args, 0, 0);
  if (p.help_requested()) {
    std::fputs(p.usage().c_str(), stdout);
    return kExitOk;
  }
  auto usage_error = [](const base::Status& s) {
    std::fprintf(stderr, "dloop bench cuda: %s\n", s.message().c_str());
    return kExitUsage;
  };
  if (!a.ok()) return usage_error(a.status());
  CudaBenchOptions o;
  o.model = a->get("model").value_or("");
  o.preset = a->get("preset").value_or("llada-8b");
  o.cache_dir = a->get("cache-dir").value_or("/tmp/dloop-bench");
  const std::string type = a->get("type").value_or("bf16");
  if (type == "f32") o.type = kernels::DType::kF32;
  else if (type == "f16") o.type = kernels::DType::kF16;
  else if (type == "bf16") o.type = kernels::DType::kBF16;
  else if (type == "q8_0") o.type = kernels::DType::kQ8_0;
  else return usage_error(base::invalid_argument("--type: unknown type '" + type + "'"));
  auto prefix = a->get_int("prefix", 1024, 0, 1 << 20);
  auto block = a->get_int("block", 32, 1, 1 << 16);
  auto canvas = a->get_int("canvas", 1280, 1, 1 << 20);
  auto repeat = a->get_int("repeat", 10, 1, 1000);
  for (const auto* r : {&prefix, &block, &canvas, &repeat}) {
    if (!r->ok()) return usage_error(r->status());
  }
  o.prefix = *prefix;
  o.block = *block;
  o.canvas = *canvas;
  o.repeat = static_cast<int>(*repeat);
  if (a->has("write-only")) {
    auto path = model_file(o);
    if (!path.ok()) {
      std::fprintf(stderr, "dloop bench cuda: %s\n", path.status().message().c_str());
      return kExitFailed;
    }
    std::printf("%s\n", path->c_str());
    return kExitOk;
  }
  if (!engine::device_backend_available(engine::Device::kCuda)) {
    std::fprintf(stderr, "dloop bench cuda: this build has no CUDA backend (configure with -DDLOOP_CUDA=ON)\n");
    return kExitFailed;
  }
  auto f = measure(o);
  if (!f.ok()) {
    std::fprintf(stderr, "dloop bench cuda: %s\n", f.status().message().c_str());
    return f.status().code() == base::Code::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  const std::string t = table(*f, o);
  std::fputs(t.c_str(), stdout);
  if (const auto out = a->get("out"); out && !out->empty()) {
    std::ofstream file(*out);
    file << t;
    if (!file) {
      std::fprintf(stderr, "dloop bench cuda: cannot write %s\n", out->c_str());
      return kExitFailed;
    }
  }
  return kExitOk;
}

}  // namespace dloop::cli
