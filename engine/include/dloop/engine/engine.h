// The engine API: open a GGUF diffusion model and generate text from chat messages or a raw
// prompt, with per-request decoding options. Results carry the text, token counts, forward
// passes and timings.
// Thread-safety: an Engine may be shared between threads; generate() and tool_call() calls are
// serialised (one request at a time); generate_batch() and tool_call_batch() decode many requests
// together, one forward pass per denoising step for all of them (batch.h), with results identical
// to decoding each alone. The PromptCache keeps prompt K/V across requests (forwarder.h).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "dloop/base/status.h"
#include "dloop/engine/chat.h"
#include "dloop/engine/decoding.h"
#include "dloop/engine/device.h"
#include "dloop/engine/forwarder.h"
#include "dloop/engine/gguf.h"
#include "dloop/engine/model.h"
#include "dloop/engine/prompt_cache.h"
#include "dloop/engine/tokenizer.h"

namespace dloop::engine {

struct EngineOptions {
  std::string model_path;
  int threads = 0;  // 0 = one per physical core
  // Where the forward passes run: kCuda uploads the weights to the GPU once (device.h,
  // docs/cuda.md); open() fails with "this build has no CUDA backend" or "no CUDA device found".
  Device device = Device::kCpu;
  // Called while the weights are paged in: (bytes done, bytes total). Empty = no progress.
  std::function<void(uint64_t, uint64_t)> on_load_progress;
  // Budget of the PromptCache (prompt K/V kept across requests, LRU); 0 = no prompt reuse.
  uint64_t prompt_cache_bytes = uint64_t{256} << 20;
};

struct ToolCallRequest;  // tool_call.h
struct ToolCallResult;

struct GenerateRequest {
  std::vector<ChatMessage> messages;  // rendered with the model's chat template
  std::vector<base::Json> tools;      // tool definitions shown in the system message
  std::string raw_prompt;             // used verbatim (special tokens parsed) when messages is empty
  DecodeOptions decode;
  StepObserver on_step;               // optional: called after every denoising step
  // A JSON Schema: the answer is JSON valid for it, decoded by infilling (docs/tool-calls.md);
  // `decode.threshold` is the commit threshold. The text is the JSON; stop tokens follow it.
  std::optional<base::Json> response_format;
};

struct Timings {
  double tokenize_ms = 0;
  double forward_ms = 0;   // inside the model
  double sampling_ms = 0;  // token choice, confidence, selection
  double total_ms = 0;
};

struct GenerateResult {
  std::string text;                    // decoded output, special tokens not rendered
  std::vector<int32_t> output_tokens;  // answer tokens before the first stop token
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;       // output_tokens.size()
  int64_t steps = 0;
  int64_t forward_passes = 0;
  bool stopped_by_eos = false;
  Timings timings;
  double tokens_per_second = 0;        // completion tokens / total time
  ForwardStats forward_stats;          // rows computed vs full passes, prompt rows reused
};

class Engine {
 public:
  // Maps the GGUF, validates it, loads the model and tokenizer. Errors name the file and the
  // key, tensor or byte offset at fault.
  static base::Result<std::unique_ptr<Engine>> open(const EngineOptions& options);

  base::Result<GenerateResult> generate(const GenerateRequest& request);
  // A tool call or a final answer by skeleton infilling (tool_call.h; engine/toolcall/).
  base::Result<ToolCallResult> tool_call(const ToolCallRequest& request);
  // The exact prompt text a request renders to.
  std::string render_prompt(const GenerateRequest& request) const;

  // Decodes the requests together (one thread each; their passes are packed into one forward
  // pass per step). Result i is what generate(requests[i]) / tool_call(requests[i]) returns.
  std::vector<base::Result<GenerateResult>> generate_batch(const std::vector<GenerateRequest>& requests);
  std::vector<base::Result<ToolCallResult>> tool_call_batch(const std::vector<ToolCallRequest>& requests);

  PromptCacheStats prompt_cache_stats() const { return prompt_cache_.stats(); }
  PromptCache& prompt_cache() { return prompt_cache_; }

  const Model& model() const { return *model_; }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  const ChatTemplate& chat_template() const { return template_; }
  const SpecialTokens& special_tokens() const { return special_; }
  kernels::ThreadPool& pool() { return *pool_; }
  double load_ms() const { return load_ms_; }
  // The accelerator the passes run on, or null on the CPU path.
  DeviceModel* device_model() { return device_.get(); }

  Engine(std::unique_ptr<Model> model, Tokenizer tokenizer, ChatTemplate chat, int threads);

 private:
  // The request bodies; `exec` is the batch member the passes go through, or null (alone).
  base::Result<GenerateResult> run_generate(const GenerateRequest& request, PassExecutor* exec);
  base::Result<GenerateResult> run_generate_json(const GenerateRequest& request, PassExecutor* exec);  // toolcall/
  base::Result<ToolCallResult> run_tool_call(const ToolCallRequest& request, PassExecutor* exec);     // toolcall/
  // DirectForwarder (the exact reference path) when no cache is asked for and the passes run
  // alone; a CachedForwarder otherwise.
  std::unique_ptr<Forwarder> make_forwarder(CacheMode cache, PromptReuse reuse, std::span<const int32_t> prompt,
                                            PassExecutor* exec);

  std::unique_ptr<Model> model_;
  Tokenizer tokenizer_;
  ChatTemplate template_;
  SpecialTokens special_;
  std::unique_ptr<kernels::ThreadPool> pool_;
  ForwardState state_;
  std::unique_ptr<DirectExecutor> direct_;  // passes of a request decoded alone, with caches
  PromptCache prompt_cache_{uint64_t{256} << 20};
  std::mutex mutex_;
  double load_ms_ = 0;
  std::unique_ptr<DeviceModel> device_;  // after model_: destroyed first
};

}  // namespace dloop::engine
