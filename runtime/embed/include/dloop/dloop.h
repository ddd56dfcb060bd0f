// libdloop: the stable embedding API of dloop. Open a GGUF diffusion model, ask it for chat
// answers and schema-guided tool calls, and run workflow files with their events delivered to a
// callback, all in process. This header uses only the C++ standard library, so programs that
// link libdloop (find_package(dloop) -> dloop::dloop) never see dloop's internal headers or its
// dependencies. Errors are values: every result has ok and, when !ok, an error message naming the
// file, field or byte offset at fault. docs/embedding.md is the guide.
// Thread-safety: a Model may be shared between threads (calls are serialised on its engine);
// run_workflow() may be called from several threads at once, each call running its own event loop.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dloop {

// "0.1.0"
const char* version();

struct Message {
  std::string role;     // system | user | assistant | tool
  std::string content;  // an assistant's earlier tool call is tool_call_text(name, arguments)
};

// The text of an earlier tool call as the model's chat format writes it.
std::string tool_call_text(const std::string& name, const std::string& arguments_json);

struct Tool {
  std::string name;
  std::string description;
  std::string parameters_json = R"({"type":"object","properties":{}})";  // a JSON Schema object
};

struct ChatOptions {
  int max_tokens = 96;                // the answer canvas
  double temperature = 0.0;           // 0 = greedy
  uint64_t seed = 0;
  std::string reasoning_effort = "low";  // instant | low | medium | high
  std::string response_schema_json;   // non-empty: the answer is JSON valid for this schema
};

struct ChatResult {
  bool ok = false;
  std::string error;
  std::string text;
  bool stopped = false;               // ended by the model (false: ran out of max_tokens)
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t forward_passes = 0;
};

struct ToolCallOptions {
  std::string tool_choice = "auto";   // auto | required | none | a tool's name
  std::string reasoning_effort = "low";
  std::string output_schema_json;     // non-empty: a final answer is JSON valid for this schema
};

struct ToolCallResult {
  bool ok = false;
  std::string error;
  bool is_call = false;
  std::string name;                   // the tool, when is_call
  std::string arguments_json;         // valid for the tool's parameters schema, when is_call
  std::string answer;                 // the final answer, when !is_call
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t forward_passes = 0;
};

class Model {
 public:
  // Maps and validates the GGUF file. nullptr on failure with *error set (when error is given).
  // device: "cpu", or "cuda" (the passes run on the GPU; docs/cuda.md): errors name an unknown
  // device, a build without the CUDA backend, or a machine without a GPU.
  static std::unique_ptr<Model> open(const std::string& gguf_path, std::string* error = nullptr, int threads = 0,
                                     const std::string& device = "cpu");
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  ChatResult chat(const std::vector<Message>& messages, const ChatOptions& options = {});
  ToolCallResult tool_call(const std::vector<Message>& messages, const std::vector<Tool>& tools,
                           const ToolCallOptions& options = {});
  const std::string& path() const;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct Event {
  std::string run_id;
  int64_t seq = 0;         // 1-based, gap-free per run
  std::string type;        // run_started, step_started, model_call, tool_call, tool_result, ...
  std::string step_path;   // "" for run-level events
  std::string json;        // the whole event as JSON (docs/state.md)
};

struct RunOptions {
  std::string workflow_path;          // a workflow YAML file
  std::string inputs_json = "{}";     // a JSON object of inputs
  std::string db_path = "dloop.db";   // the state database (created when missing)
  std::string workspace = ".";        // root of file tools and processes
  Model* model = nullptr;             // the model of agent steps; nullptr: model_path
  std::string model_path;             // used when model is nullptr; "" = no model (agent steps fail)
  std::function<void(const Event&)> on_event;  // called on the run's loop thread as events commit
};

struct RunResult {
  bool ok = false;          // the run completed
  std::string error;        // why not: an invalid workflow (file:line:column), bad inputs, the failure
  std::string run_id;       // set once the run was created (resume it with `dloop resume RUN_ID`)
  std::string status;       // completed | failed | cancelled ("" when no run was created)
  std::string outputs_json; // the workflow's outputs when ok
};

// Runs a workflow to its end on the calling thread.
RunResult run_workflow(const RunOptions& options);

}  // namespace dloop
