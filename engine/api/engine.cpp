// Engine: model + tokenizer + chat template + thread pool behind one generate() call.
#include "dloop/engine/engine.h"

#include <algorithm>
#include <chrono>

namespace dloop::engine {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Touches every page of the tensor data so the first denoising step does not pay for page
// faults, reporting progress as it goes.
void page_in(const GgufFile& file, const std::function<void(uint64_t, uint64_t)>& progress) {
  uint64_t total = 0, done = 0;
  for (const GgufTensor& t : file.tensors()) total += t.n_bytes;
  volatile uint8_t sink = 0;
  uint64_t next_report = 0;
  for (const GgufTensor& t : file.tensors()) {
    for (uint64_t off = 0; off < t.n_bytes; off += 4096) sink = sink + t.data[off];
    done += t.n_bytes;
    if (progress && (done >= next_report || done == total)) {
      progress(done, total);
      next_report = done + total / 100;
    }
  }
  (void)sink;
}

}  // namespace

Engine::Engine(std::unique_ptr<Model> model, Tokenizer tokenizer, ChatTemplate chat, int threads)
    : model_(std::move(model)), tokenizer_(std::move(tokenizer)), template_(std::move(chat)),
      pool_(std::make_unique<kernels::ThreadPool>(threads > 0 ? threads : kernels::default_thread_count())),
      direct_(std::make_unique<DirectExecutor>(*model_, *pool_)) {
  special_.mask = tokenizer_.mask_id();
  special_.eos = tokenizer_.eos_id();
  if (tokenizer_.eos_id() >= 0) special_.stop.push_back(tokenizer_.eos_id());
  if (tokenizer_.eot_id() >= 0 && tokenizer_.eot_id() != tokenizer_.eos_id()) special_.stop.push_back(tokenizer_.eot_id());
  // The chat template's end-of-turn marker also ends an answer.
  for (const char* marker : {"<|im_end|>", "<|eot_id|>"}) {
    if (auto id = tokenizer_.find_special(marker)) {
      if (std::find(special_.stop.begin(), special_.stop.end(), *id) == special_.stop.end()) special_.stop.push_back(*id);
    }
  }
}

base::Result<std::unique_ptr<Engine>> Engine::open(const EngineOptions& options) {
  auto t0 = Clock::now();
  auto opened = GgufFile::open(options.model_path);
  if (!opened.ok()) return opened.status();
  std::shared_ptr<const GgufFile> file = std::move(opened).value();
  auto model = Model::load(file);
  if (!model.ok()) return model.status().with_context(options.model_path);
  auto tokenizer = Tokenizer::from_gguf(*file);
  if (!tokenizer.ok()) return tokenizer.status().with_context(options.model_path);
  if (tokenizer->n_vocab() != (*model)->config().n_vocab) {
    return base::invalid_argument(options.model_path + ": tokenizer has " + std::to_string(tokenizer->n_vocab()) +
                                  " tokens but token_embd.weight has " + std::to_string((*model)->config().n_vocab) + " rows");
  }
  std::string template_source;
  if (file->has("tokenizer.chat_template")) {
    auto src = file->get_string("tokenizer.chat_template");
    if (src.ok()) template_source = *src;
  }
  page_in(*file, options.on_load_progress);
  auto engine = std::make_unique<Engine>(std::move(model).value(), std::move(tokenizer).value(),
                                         ChatTemplate::detect(template_source), options.threads);
  if (engine->special_.mask < 0) {
    return base::invalid_argument(options.model_path + ": tokenizer.ggml.mask_token_id is missing; this is not a diffusion model");
  }
  engine->prompt_cache_.set_budget(options.prompt_cache_bytes);
  if (options.device != Device::kCpu) {
    auto device = open_device_model(options.device, *engine->model_);
    if (!device.ok()) return device.status();
    engine->device_ = std::move(device).value();
  }
  engine->load_ms_ = ms_since(t0);
  return engine;
}

std::string Engine::render_prompt(const GenerateRequest& request) const {
  if (request.messages.empty()) return request.raw_prompt;
  return template_.render(request.messages, request.tools, /*add_generation_prompt=*/true);
}

std::unique_ptr<Forwarder> Engine::make_forwarder(CacheMode cache, PromptReuse reuse, std::span<const int32_t> prompt,
                                                  PassExecutor* exec) {
  const bool reusing = reuse != PromptReuse::kOff && prompt_cache_.stats().budget_bytes > 0;
  if (device_ != nullptr) {  // the same choices on the device (docs/cuda.md)
    DeviceForwarderOptions o;
    o.mode = cache;
    o.batch = exec != nullptr ? exec->device_batch() : nullptr;
    if (reusing) {
      o.prompt_cache = &prompt_cache_;
      o.segment_ends = prompt_segment_ends(prompt, special_.stop, reuse);
    }
    return device_->make_forwarder(o);
  }
  if (cache == CacheMode::kNone && !reusing && exec == nullptr) {
    return std::make_unique<DirectForwarder>(*model_, *pool_, state_);
  }
  CacheOptions o;
  o.mode = cache;
  if (reusing) {
    o.prompt_cache = &prompt_cache_;
    o.segment_ends = prompt_segment_ends(prompt, special_.stop, reuse);
  }
  return std::make_unique<CachedForwarder>(*model_, exec != nullptr ? *exec : *direct_, std::move(o));
}

base::Result<GenerateResult> Engine::generate(const GenerateRequest& request) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (request.response_format) return run_generate_json(request, nullptr);
  return run_generate(request, nullptr);
}

base::Result<GenerateResult> Engine::run_generate(const GenerateRequest& request, PassExecutor* exec) {
  auto t0 = Clock::now();
  GenerateResult r;
  std::vector<int32_t> prompt = tokenizer_.encode(render_prompt(request), /*parse_special=*/true);
  r.timings.tokenize_ms = ms_since(t0);
  r.prompt_tokens = static_cast<int64_t>(prompt.size());
  std::unique_ptr<Forwarder> forwarder = make_forwarder(request.decode.cache, request.decode.prompt_reuse, prompt, exec);
  auto decoded = decode(*model_, *forwarder, prompt, request.decode, special_, request.on_step);
  if (!decoded.ok()) return decoded.status();
  r.forward_stats = decoded->forward_stats;
  r.output_tokens = decoded->output;
  r.text = tokenizer_.decode(decoded->output, /*render_special=*/false);
  r.completion_tokens = static_cast<int64_t>(decoded->output.size());
  r.steps = decoded->steps;
  r.forward_passes = decoded->forward_passes;
  r.stopped_by_eos = decoded->stopped_by_eos;
  r.timings.forward_ms = decoded->forward_ms;
  r.timings.sampling_ms = decoded->sampling_ms;
  r.timings.total_ms = ms_since(t0);
  r.tokens_per_second = r.timings.total_ms > 0 ? 1000.0 * static_cast<double>(r.completion_tokens) / r.timings.total_ms : 0;
  return r;
}

}  // namespace dloop::engine
