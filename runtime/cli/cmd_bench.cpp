// `dloop bench`: performance figures measured in one run, each next to a baseline measured in
// the same run. `bench engine`: forward-pass time over a full canvas on random-weight llada
// models (tiny, small, 0.5b), the sum of that pass's matrix products, and GFLOP/s of our matmul
// next to OpenBLAS sgemm on the same shapes (OpenBLAS is loaded with dlopen when installed; it is
// a benchmark baseline only, never a dependency).
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>

#include "args.h"
#include "bench_decode.h"
#include "commands.h"
#include "dloop/base/json.h"
#include "dloop/base/strings.h"
#include "dloop/engine/gguf.h"
#include "dloop/engine/model.h"
#include "dloop/engine/random_model.h"
#include "model_path.h"

namespace dloop::cli {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// OpenBLAS's cblas_sgemm, when the library is installed.
class OpenBlas {
 public:
  OpenBlas() {
    for (const char* name : {"libopenblas.so.0", "libopenblas.so"}) {
      handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle_) break;
    }
    if (!handle_) return;
    sgemm_ = reinterpret_cast<Sgemm>(dlsym(handle_, "cblas_sgemm"));
    set_threads_ = reinterpret_cast<void (*)(int)>(dlsym(handle_, "openblas_set_num_threads"));
  }
  // OpenBLAS gets the same number of threads as our matmul, so the ratio compares like with like.
  void set_threads(int n) const { if (set_threads_) set_threads_(n); }
  ~OpenBlas() { if (handle_) dlclose(handle_); }
  bool available() const { return sgemm_ != nullptr; }
  // y[m x n] = x[m x k] * w[n x k]^T
  void matmul(const float* x, int64_t m, const float* w, int64_t n, int64_t k, float* y) const {
    sgemm_(101, 111, 112, int(m), int(n), int(k), 1.0f, x, int(k), w, int(k), 0.0f, y, int(n));
  }

 private:
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
  void* handle_ = nullptr;
  Sgemm sgemm_ = nullptr;
  void (*set_threads_)(int) = nullptr;
};

struct Shape {
  std::string what;
  int64_t rows, cols, count;  // weight rows x cols, used `count` times per forward pass
};

std::vector<Shape> forward_shapes(const engine::ModelConfig& c) {
  const int64_t q = c.n_head * c.head_dim, kv = c.n_head_kv * c.head_dim;
  return {{"attn_q", q, c.n_embd, c.n_layer},      {"attn_k", kv, c.n_embd, c.n_layer},
          {"attn_v", kv, c.n_embd, c.n_layer},     {"attn_output", c.n_embd, q, c.n_layer},
          {"ffn_gate", c.n_ff, c.n_embd, c.n_layer}, {"ffn_up", c.n_ff, c.n_embd, c.n_layer},
          {"ffn_down", c.n_embd, c.n_ff, c.n_layer}, {"output", c.n_vocab, c.n_embd, 1}};
}

template <typename F>
double time_ms(int repeat, F&& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return median(t);
}

struct EngineBenchOptions {
  std::vector<std::string> models;
  int64_t canvas = 320;
  int repeat = 5;
  int threads = 0;
  kernels::DType type = kernels::DType::kF32;
  std::string cache_dir;
};

// The random model file of a preset, written on first use.
base::Result<std::string> random_model_file(const std::string& preset, const EngineBenchOptions& o) {
  auto spec = engine::random_model_preset(preset);
  if (!spec) return base::invalid_argument("unknown model preset '" + preset + "'");
  spec->type = o.type;
  namespace fs = std::filesystem;
  fs::create_directories(o.cache_dir);
  std::string path = o.cache_dir + "/random-" + preset + "-" + kernels::dtype_info(o.type).name + ".gguf";
  if (!fs::exists(path)) {
    std::fprintf(stderr, "bench: writing %s (%.0fM parameters)...\n", path.c_str(), double(spec->n_params()) / 1e6);
    DLOOP_RETURN_IF_ERROR(engine::write_random_model(*spec, path + ".tmp"));
    fs::rename(path + ".tmp", path);
  }
  return path;
}

base::Result<base::Json> bench_model(const std::string& preset, const EngineBenchOptions& o, const OpenBlas& blas) {
  DLOOP_ASSIGN_OR_RETURN(std::string path, random_model_file(preset, o));
  DLOOP_ASSIGN_OR_RETURN(auto file, engine::GgufFile::open(path));
  std::shared_ptr<const engine::GgufFile> shared = std::move(file);
  DLOOP_ASSIGN_OR_RETURN(auto model, engine::Model::load(shared));
  const engine::ModelConfig& c = model->config();
  kernels::ThreadPool pool(o.threads > 0 ? o.threads : kernels::default_thread_count());
  blas.set_threads(pool.size());

  std::mt19937 rng(7);
  std::vector<int32_t> tokens(static_cast<size_t>(o.canvas));
  for (auto& t : tokens) t = static_cast<int32_t>(rng() % 256);
  std::vector<int32_t> rows(tokens.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
  std::vector<float> logits(tokens.size() * static_cast<size_t>(c.n_vocab));
  engine::ForwardState state;
  base::Status st;
  std::fprintf(stderr, "bench: %s forward passes over %lld positions...\n", preset.c_str(), static_cast<long long>(o.canvas));
  const double fwd_ms = time_ms(o.repeat, [&] { st = model->forward(pool, tokens, rows, logits.data(), state); });
  DLOOP_RETURN_IF_ERROR(st);

  // The pass's matrix products, each timed alone on the model's own weights, with the same input.
  const engine::LayerWeights& l0 = model->weights().layers[0];
  std::map<std::string, kernels::WeightView> views = {
      {"attn_q", l0.wq}, {"attn_k", l0.wk}, {"attn_v", l0.wv}, {"attn_output", l0.wo},
      {"ffn_gate", l0.w_gate}, {"ffn_up", l0.w_up}, {"ffn_down", l0.w_down}, {"output", model->weights().output}};
  std::vector<float> x(static_cast<size_t>(o.canvas * std::max(c.n_ff, c.n_embd)), 0.01f), y(logits.size());
  std::vector<float> w_f32;
  double matmul_sum = 0, flops_total = 0;
  base::Json shapes = base::Json::array();
  for (const Shape& s : forward_shapes(c)) {
    const kernels::WeightView& w = views.at(s.what);
    const double ms = time_ms(o.repeat, [&] { kernels::matmul(pool, x.data(), o.canvas, w, y.data()); });
    const double flops = 2.0 * double(o.canvas) * double(s.rows) * double(s.cols);
    matmul_sum += ms * double(s.count);
    flops_total += flops * double(s.count);
    base::Json j = base::Json::object();
    j.set("weight", s.what);
    j.set("m", o.canvas);
    j.set("n", s.rows);
    j.set("k", s.cols);
    j.set("ms", ms);
    j.set("gflops", flops / ms / 1e6);
    if (blas.available()) {
      w_f32.resize(static_cast<size_t>(s.rows * s.cols));
      for (int64_t r = 0; r < s.rows; ++r) {
        kernels::dequantize_row(w.type, static_cast<const uint8_t*>(w.data) + r * kernels::row_bytes(w.type, s.cols),
                                w_f32.data() + r * s.cols, s.cols);
      }
      const double bms = time_ms(o.repeat, [&] { blas.matmul(x.data(), o.canvas, w_f32.data(), s.rows, s.cols, y.data()); });
      j.set("openblas_gflops", flops / bms / 1e6);
      j.set("ratio_to_openblas", bms / ms);
    }
    shapes.push_back(std::move(j));
  }
  base::Json out = base::Json::object();
  out.set("model", preset);
  out.set("params_millions", double(c.n_params) / 1e6);
  out.set("weight_type", kernels::dtype_info(o.type).name);
  out.set("canvas", o.canvas);
  out.set("threads", pool.size());
  out.set("forward_ms", fwd_ms);
  out.set("matmul_sum_ms", matmul_sum);
  out.set("forward_over_matmul_sum", fwd_ms / matmul_sum);
  out.set("forward_gflops", flops_total / fwd_ms / 1e6);
  out.set("shapes", std::move(shapes));
  return out;
}

void print_engine_table(const base::Json& results) {
  std::printf("%-6s %8s %5s %6s %12s %14s %8s %10s\n", "model", "params", "type", "canvas", "forward ms",
              "matmul sum ms", "ratio", "GFLOP/s");
  for (const auto& r : results.as_array()) {
    std::printf("%-6s %7.1fM %5s %6lld %12.2f %14.2f %8.2f %10.1f\n", r.find("model")->as_string().c_str(),
                r.find("params_millions")->as_double(), r.find("weight_type")->as_string().c_str(),
                static_cast<long long>(r.find("canvas")->as_int()), r.find("forward_ms")->as_double(),
                r.find("matmul_sum_ms")->as_double(), r.find("forward_over_matmul_sum")->as_double(),
                r.find("forward_gflops")->as_double());
  }
  std::printf("\n%-6s %-12s %6s %6s %6s %10s %12s %8s\n", "model", "weight", "m", "n", "k", "GFLOP/s", "OpenBLAS", "ours/ob");
  for (const auto& r : results.as_array()) {
    for (const auto& s : r.find("shapes")->as_array()) {
      const base::Json* ob = s.find("openblas_gflops");
      std::printf("%-6s %-12s %6lld %6lld %6lld %10.1f %12s %8s\n", r.find("model")->as_string().c_str(),
                  s.find("weight")->as_string().c_str(), static_cast<long long>(s.find("m")->as_int()),
                  static_cast<long long>(s.find("n")->as_int()), static_cast<long long>(s.find("k")->as_int()),
                  s.find("gflops")->as_double(), ob ? std::to_string(int(ob->as_double())).c_str() : "n/a",
                  ob ? (std::to_string(int(100 * s.find("ratio_to_openblas")->as_double())) + "%").c_str() : "n/a");
    }
  }
}

int bench_engine(const std::vector<std::string>& args) {
  ArgParser p("bench engine", "[options]",
              "Forward-pass time over a full canvas on random-weight llada models, the sum of its matrix\n"
              "products, and our matmul GFLOP/s next to OpenBLAS sgemm on the same shapes (run with\n"
              "OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset so OpenBLAS uses its AVX-512 kernels). Then, for the\n"
              "--decode models: one forward pass over the full canvas, one prefix-cache step and one dual-cache\n"
              "step, and --gen-length tokens at each reasoning preset with the cache off, prefix and dual, next\n"
              "to the reference schedule (one token per step, no cache) measured in the same run.");
  p.flag({"models", "LIST", "comma-separated presets: tiny, small, 0.5b, llada-8b", false, "tiny,small,0.5b"})
      .flag({"canvas", "N", "canvas positions per forward pass", false, "320"})
      .flag({"repeat", "N", "timed repetitions (median reported)", false, "5"})
      .flag({"threads", "N", "compute threads", false, "physical cores"})
      .flag({"type", "TYPE", "weight type: f32, f16, bf16, q8_0", false, "f32"})
      .flag({"cache-dir", "DIR", "where the random models are written", false, "/tmp/dloop-bench"})
      .flag({"decode", "LIST", "models for the decoding figures: 'default' (bundled), GGUF paths, presets, or 'none'", false,
             "default,tiny"})
      .flag({"gen-length", "N", "tokens generated per decoding run", false, "256"})
      .flag({"prompt-tokens", "N", "prompt length of the decoding runs", false, "64"})
      .flag({"json", "", "print JSON instead of tables"});
  auto a = p.parse(args, 0, 0);
  if (p.help_requested()) { std::fputs(p.usage().c_str(), stdout); return kExitOk; }
  auto usage_error = [](const base::Status& s) {
    std::fprintf(stderr, "dloop bench engine: %s\n", s.message().c_str());
    return kExitUsage;
  };
  if (!a.ok()) return usage_error(a.status());
  EngineBenchOptions o;
  o.models = base::split(a->get("models").value_or("tiny,small,0.5b"), ',');
  auto canvas = a->get_int("canvas", 320, 1, 8192);
  auto repeat = a->get_int("repeat", 5, 1, 1000);
  auto threads = a->get_int("threads", 0, 0, 256);
  if (!canvas.ok()) return usage_error(canvas.status());
  if (!repeat.ok()) return usage_error(repeat.status());
  if (!threads.ok()) return usage_error(threads.status());
  auto gen = a->get_int("gen-length", 256, 32, 4096);
  auto plen = a->get_int("prompt-tokens", 64, 1, 8192);
  if (!gen.ok()) return usage_error(gen.status());
  if (!plen.ok()) return usage_error(plen.status());
  if (*gen % 32 != 0) return usage_error(base::invalid_argument("--gen-length must be a multiple of 32"));
  o.canvas = *canvas;
  o.repeat = static_cast<int>(*repeat);
  o.threads = static_cast<int>(*threads);
  std::string type = a->get("type").value_or("f32");
  const std::map<std::string, kernels::DType> types = {{"f32", kernels::DType::kF32}, {"f16", kernels::DType::kF16},
                                                       {"bf16", kernels::DType::kBF16}, {"q8_0", kernels::DType::kQ8_0}};
  if (!types.count(type)) return usage_error(base::invalid_argument("--type: unknown type '" + type + "'"));
  o.type = types.at(type);
  o.cache_dir = a->get("cache-dir").value_or("/tmp/dloop-bench");
  OpenBlas blas;
  if (!blas.available()) std::fprintf(stderr, "bench: OpenBLAS not found (apt-get install libopenblas0); no baseline\n");
  base::Json results = base::Json::array();
  for (const auto& m : o.models) {
    if (m == "none" || m.empty()) continue;
    auto r = bench_model(m, o, blas);
    if (!r.ok()) {
      std::fprintf(stderr, "dloop bench engine: %s\n", r.status().message().c_str());
      return r.status().code() == base::Code::kInvalidArgument ? kExitUsage : kExitFailed;
    }
    results.push_back(std::move(r).value());
  }
  DecodeBenchOptions d;
  d.gen_length = *gen;
  d.prompt_tokens = *plen;
  d.threads = o.threads;
  base::Json decoded = base::Json::array();
  for (const auto& m : base::split(a->get("decode").value_or("default,tiny"), ',')) {
    if (m == "none" || m.empty()) continue;
    const bool is_file = m == "default" || m.find('/') != std::string::npos || base::ends_with(m, ".gguf");
    auto path = is_file ? resolve_model_path(m) : random_model_file(m, o);
    auto r = path.ok() ? bench_decode(m, *path, d) : base::Result<base::Json>(path.status());
    if (!r.ok()) {
      std::fprintf(stderr, "dloop bench engine: %s\n", r.status().message().c_str());
      return r.status().code() == base::Code::kInvalidArgument ? kExitUsage : kExitFailed;
    }
    decoded.push_back(std::move(r).value());
  }
  if (a->has("json")) {
    base::Json all = base::Json::object();
    all.set("forward", std::move(results));
    all.set("decode", std::move(decoded));
    std::printf("%s\n", all.dump(base::Json::Style::kPretty).c_str());
  } else {
    print_engine_table(results);
    if (!decoded.as_array().empty()) print_decode_table(decoded);
  }
  return kExitOk;
}

}  // namespace

int bench_toolcall(const std::vector<std::string>& args);  // cmd_bench_toolcall.cpp
int bench_cuda(const std::vector<std::string>& args);      // cmd_bench_cuda.cpp
int bench_runtime(const std::vector<std::string>& args);   // cmd_bench_runtime.cpp

int cmd_bench(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: dloop bench WHAT [options]\n\n"
      "  engine    forward-pass time and matmul GFLOP/s vs OpenBLAS on random-weight models\n"
      "  toolcall  held-out tool calls: infilling vs left-to-right decoding (passes, wall time, accuracy)\n"
      "  cuda      CUDA backend: denoising-step time with and without cache vs the HBM floor\n"
      "  runtime   runtime cost per agent turn (model replayed, durable commit) and 100 concurrent runs\n"
      "  batch     throughput of batched decoding at 1, 2, 4, 8, 16 concurrent requests\n"
      "  cache     K/V caches and prompt reuse on held-out tool calls: accuracy and speed vs cache off\n\n"
      "'dloop bench WHAT --help' for the options of each.\n";
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(usage.c_str(), args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "engine") return bench_engine(rest);
  if (args[0] == "toolcall") return bench_toolcall(rest);
  if (args[0] == "cuda") return bench_cuda(rest);
  if (args[0] == "runtime") return bench_runtime(rest);
  if (args[0] == "batch") return bench_batch(rest);
  if (args[0] == "cache") return bench_cache(rest);
  std::fprintf(stderr, "dloop bench: unknown benchmark '%s'\n%s", args[0].c_str(), usage.c_str());
  return kExitUsage;
}

}  // namespace dloop::cli
