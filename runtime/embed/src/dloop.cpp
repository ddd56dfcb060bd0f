// libdloop: the stable embedding API (dloop/dloop.h) over engine::Engine and runtime::execute_run.
// Conversions between the header's std-only types and dloop's internal ones live here, so the
// internal headers can change without breaking programs built against the installed header.
#include "dloop/dloop.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "dloop/base/json.h"
#include "dloop/engine/engine.h"
#include "dloop/engine/tool_call.h"
#include "dloop/memory/store.h"
#include "dloop/runtime/executor.h"
#include "dloop/tools/builtins.h"
#include "dloop/workflows/load.h"

namespace dloop {

namespace asio = boost::asio;
using base::Json;

struct Model::Impl {
  std::string path;
  std::shared_ptr<engine::Engine> engine;
};

const char* version() { return DLOOP_VERSION; }

std::string tool_call_text(const std::string& name, const std::string& arguments_json) {
  std::string args = arguments_json;
  if (auto parsed = Json::parse(arguments_json); parsed.ok()) args = parsed->dump(Json::Style::kPython);
  return "<tool_call>{\"name\": " + base::json_quote(name) + ", \"arguments\": " + args + "}</tool_call>";
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;
const std::string& Model::path() const { return impl_->path; }

std::unique_ptr<Model> Model::open(const std::string& gguf_path, std::string* error, int threads,
                                   const std::string& device) {
  engine::EngineOptions o;
  o.model_path = gguf_path;
  o.threads = threads;
  const auto dev = engine::parse_device(device);
  if (!dev) {
    if (error) *error = "unknown device '" + device + "' (cpu or cuda)";
    return nullptr;
  }
  o.device = *dev;
  auto e = engine::Engine::open(o);
  if (!e.ok()) {
    if (error) *error = e.status().message();
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->path = gguf_path;
  impl->engine = std::shared_ptr<engine::Engine>(std::move(e).value());
  return std::unique_ptr<Model>(new Model(std::move(impl)));
}

namespace {

std::vector<engine::ChatMessage> to_engine(const std::vector<Message>& messages) {
  std::vector<engine::ChatMessage> out;
  for (const auto& m : messages) out.push_back({m.role == "developer" ? "system" : m.role, m.content});
  return out;
}

base::Result<engine::ReasoningEffort> effort_of(const std::string& name) {
  if (auto e = engine::parse_reasoning_effort(name)) return *e;
  return base::invalid_argument("reasoning_effort '" + name + "' (expected instant, low, medium or high)");
}

base::Result<std::optional<Json>> schema_of(const std::string& text, const char* field) {
  if (text.empty()) return std::optional<Json>();
  auto j = Json::parse(text);
  if (!j.ok()) return base::invalid_argument(std::string(field) + ": " + j.status().message());
  return std::optional<Json>(std::move(j).value());
}

}  // namespace

ChatResult Model::chat(const std::vector<Message>& messages, const ChatOptions& options) {
  ChatResult out;
  auto effort = effort_of(options.reasoning_effort);
  auto schema = schema_of(options.response_schema_json, "response_schema_json");
  if (!effort.ok() || !schema.ok()) {
    out.error = (!effort.ok() ? effort.status() : schema.status()).message();
    return out;
  }
  const engine::ReasoningPreset& preset = engine::reasoning_preset(*effort);
  engine::GenerateRequest g;
  g.messages = to_engine(messages);
  g.decode.gen_length = options.max_tokens;
  g.decode.steps = options.max_tokens;
  g.decode.block_length = std::min<int64_t>(preset.answer_block_length, options.max_tokens);
  if (g.decode.block_length <= 0 || options.max_tokens % g.decode.block_length != 0) g.decode.block_length = 0;
  g.decode.threshold = preset.threshold;
  g.decode.temperature = options.temperature;
  g.decode.seed = options.seed;
  g.response_format = *schema;
  auto r = impl_->engine->generate(g);
  if (!r.ok()) {
    out.error = r.status().message();
    return out;
  }
  out.ok = true;
  out.text = r->text;
  out.stopped = r->stopped_by_eos || g.response_format.has_value();
  out.prompt_tokens = r->prompt_tokens;
  out.completion_tokens = r->completion_tokens;
  out.forward_passes = r->forward_passes;
  return out;
}

ToolCallResult Model::tool_call(const std::vector<Message>& messages, const std::vector<Tool>& tools,
                                const ToolCallOptions& options) {
  ToolCallResult out;
  engine::ToolCallRequest req;
  req.messages = to_engine(messages);
  for (size_t i = 0; i < tools.size(); ++i) {
    auto params = Json::parse(tools[i].parameters_json);
    if (!params.ok()) {
      out.error = "tools[" + std::to_string(i) + "] '" + tools[i].name + "': parameters_json: " + params.status().message();
      return out;
    }
    req.tools.push_back({tools[i].name, tools[i].description, std::move(params).value()});
  }
  auto choice = engine::parse_tool_choice(options.tool_choice);
  auto effort = effort_of(options.reasoning_effort);
  auto schema = schema_of(options.output_schema_json, "output_schema_json");
  if (!choice) {
    out.error = "tool_choice '" + options.tool_choice + "' (expected auto, required, none or a tool name)";
    return out;
  }
  if (!effort.ok() || !schema.ok()) {
    out.error = (!effort.ok() ? effort.status() : schema.status()).message();
    return out;
  }
  req.tool_choice = *choice;
  req.effort = *effort;
  req.output_schema = *schema;
  auto r = impl_->engine->tool_call(req);
  if (!r.ok()) {
    out.error = r.status().message();
    return out;
  }
  out.ok = true;
  out.is_call = r->is_call;
  out.name = r->name;
  out.arguments_json = r->is_call ? r->arguments_json.dump() : "";
  out.answer = r->answer;
  out.prompt_tokens = r->prompt_tokens;
  out.completion_tokens = r->completion_tokens;
  out.forward_passes = r->forward_passes;
  return out;
}

RunResult run_workflow(const RunOptions& options) {
  RunResult out;
  workflows::LoadOptions lo;
  lo.builtin_tools = tools::builtin_names();
  std::ifstream in(options.workflow_path, std::ios::binary);
  if (!in) {
    out.error = options.workflow_path + ": cannot read the workflow file";
    return out;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  workflows::LoadResult loaded = workflows::parse_workflow(text, options.workflow_path, lo);
  if (!loaded.workflow) {
    for (const auto& d : loaded.diagnostics) out.error += (out.error.empty() ? "" : "\n") + d.to_string();
    return out;
  }
  auto given = Json::parse(options.inputs_json);
  if (!given.ok() || !given->is_object()) {
    out.error = "inputs_json must be a JSON object" + (given.ok() ? std::string() : ": " + given.status().message());
    return out;
  }
  auto inputs = workflows::resolve_inputs(*loaded.workflow, *given);
  if (!inputs.ok()) {
    out.error = inputs.status().message();
    return out;
  }
  auto store = memory::Store::open(options.db_path);
  if (!store.ok()) {
    out.error = options.db_path + ": " + store.status().message();
    return out;
  }
  runtime::RunRequest rr;
  rr.workflow = std::make_shared<const workflows::Workflow>(std::move(*loaded.workflow));
  rr.workflow_path = std::filesystem::absolute(options.workflow_path).lexically_normal().string();
  rr.workflow_hash = runtime::sha256_hex(text);
  rr.inputs = std::move(inputs).value();
  rr.workspace = std::filesystem::absolute(options.workspace).lexically_normal();
  if (options.on_event) {
    auto cb = options.on_event;
    rr.on_event = [cb](const memory::Event& e) {
      cb(Event{e.run_id, e.seq, e.type, e.step_path, memory::to_json(e).dump()});
    };
  }
  asio::io_context ioc;
  asio::thread_pool blocking(4);
  asio::thread_pool db(1);
  runtime::RuntimeServices services;
  services.store = std::shared_ptr<memory::Store>(std::move(store).value());
  services.blocking = blocking.get_executor();
  services.db = db.get_executor();
  if (options.model != nullptr) {
    std::shared_ptr<engine::Engine> eng = options.model->impl().engine;
    services.engine = std::make_shared<runtime::EngineBridge>(
        [eng](const engine::ToolCallRequest& r) { return eng->tool_call(r); });
  } else if (!options.model_path.empty()) {
    // The workflow's `device:` (validated by the loader: cpu or cuda).
    const auto device = engine::parse_device(rr.workflow->device).value_or(engine::Device::kCpu);
    services.engine = std::make_shared<runtime::EngineBridge>(options.model_path, 0, device);
  }
  runtime::RunOutcome outcome;
  bool aborted = false;
  asio::co_spawn(ioc, runtime::execute_run(std::move(rr), services), [&](std::exception_ptr ep, runtime::RunOutcome o) {
    aborted = ep != nullptr;
    outcome = std::move(o);
  });
  ioc.run();
  blocking.join();
  db.join();
  out.run_id = outcome.run_id;
  if (aborted) {
    out.error = "the run aborted";
    return out;
  }
  out.ok = outcome.status.ok();
  if (!out.run_id.empty()) {
    out.status = out.ok ? "completed" : outcome.status.code() == base::Code::kCancelled ? "cancelled" : "failed";
  }
  if (out.ok) out.outputs_json = outcome.outputs.dump();
  else out.error = outcome.status.message();
  return out;
}

}  // namespace dloop
