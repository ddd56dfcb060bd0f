// The executor's two points of contact with the world, ask_model and call_tool, and how a replay
// (replay.h) answers them from the record instead. Outside a replay they are the engine bridge and
// the tool registry. A strict replay that is asked for something the record does not have notes
// the divergence, which stops the run (cancelled() turns true), and answers "cancelled".
#include <chrono>

#include "run_context.h"

namespace dloop::runtime {

namespace et = memory::event_type;

namespace {

// The parts of a model request a strict replay compares: what the workflow decides. Decoding
// presets and the model file are engine matters and may change without the path changing.
constexpr const char* kComparedRequestFields[] = {"messages", "tools", "tool_definitions", "tool_choice",
                                                  "reasoning", "output_schema"};

int64_t int_field(const Json& j, std::string_view key) {
  const Json* v = j.find(key);
  return v && v->is_number() ? static_cast<int64_t>(v->as_double()) : 0;
}

double double_field(const Json& j, std::string_view key) {
  const Json* v = j.find(key);
  return v && v->is_number() ? v->as_double() : 0;
}

}  // namespace

int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

engine::ToolCallResult model_result_from_record(const Json& payload) {
  engine::ToolCallResult r;
  const Json* out = payload.find("output");
  const Json* type = out ? out->find("type") : nullptr;
  if (type && type->is_string() && type->as_string() == "call") {
    r.is_call = true;
    const Json* name = out->find("name");
    r.name = name && name->is_string() ? name->as_string() : "";
    const Json* args = out->find("arguments");
    r.arguments_json = args ? *args : Json::object();
    r.arguments = r.arguments_json.dump(Json::Style::kPython);
  } else if (out) {
    const Json* text = out->find("text");
    r.answer = text && text->is_string() ? text->as_string() : "";
  }
  if (const Json* p = payload.find("prompt_text"); p && p->is_string()) r.prompt_text = p->as_string();
  r.prompt_tokens = int_field(payload, "prompt_tokens");
  r.completion_tokens = int_field(payload, "completion_tokens");
  r.forward_passes = int_field(payload, "forward_passes");
  r.steps = int_field(payload, "steps");
  if (const Json* t = payload.find("timings")) {
    r.timings.tokenize_ms = double_field(*t, "tokenize_ms");
    r.timings.forward_ms = double_field(*t, "forward_ms");
    r.timings.sampling_ms = double_field(*t, "sampling_ms");
    r.timings.total_ms = double_field(*t, "total_ms");
  } else {
    r.timings.total_ms = double_field(payload, "ms");
  }
  return r;
}

tools::ToolResult tool_result_from_record(const Json& payload) {
  if (const Json* v = payload.find("result")) return tools::ToolResult::success(*v);
  const Json* e = payload.find("error");
  const Json* code = e ? e->find("code") : nullptr;
  const Json* msg = e ? e->find("message") : nullptr;
  tools::ToolErrorKind kind = tools::ToolErrorKind::kFailed;
  for (auto k : {tools::ToolErrorKind::kInvalidArguments, tools::ToolErrorKind::kTimeout,
                 tools::ToolErrorKind::kFailed, tools::ToolErrorKind::kCrashed,
                 tools::ToolErrorKind::kOutputTooLarge, tools::ToolErrorKind::kDenied}) {
    if (code && code->is_string() && code->as_string() == tools::tool_error_kind_name(k)) kind = k;
  }
  return tools::ToolResult::failure(kind, msg && msg->is_string() ? msg->as_string() : "failed");
}

asio::awaitable<base::Result<engine::ToolCallResult>> RunContext::ask_model(std::string path, int64_t attempt,
                                                                             int64_t turn,
                                                                             engine::ToolCallRequest req,
                                                                             Json request) {
  ReplayLog* log = request_.replay.get();
  const memory::Event* rec = log ? log->take(path, attempt, et::kModelCall, turn - 1) : nullptr;
  if (log && log->strict()) {
    Divergence d;
    d.step_path = path;
    d.attempt = attempt;
    d.turn = turn;
    d.what = "model request";
    if (!rec) {
      // The recorded run's model failed at this turn (it could not be opened, say): so does this one.
      const std::string prefix = "turn " + std::to_string(turn) + ": ";
      if (auto failed = log->recorded_failure(path, attempt, "model_error"); failed && failed->rfind(prefix, 0) == 0) {
        co_return base::unavailable(failed->substr(prefix.size()));
      }
      d.what = "model call";
      d.expected = "no model call at this turn in the record";
      d.got = "a model call with " + std::to_string(req.messages.size()) + " messages";
      log->diverge(std::move(d));
      co_return base::cancelled("the replay diverged");
    }
    const Json* recorded = rec->payload.find("request");
    for (const char* field : kComparedRequestFields) {
      const Json* want = recorded ? recorded->find(field) : nullptr;
      const Json* got = request.find(field);
      if (!want) continue;  // older logs record fewer fields
      std::string where, a, b;
      if (first_difference(*want, got ? *got : Json(), field, &where, &a, &b)) {
        d.field = where;
        d.expected = a;
        d.got = b;
        log->diverge(std::move(d));
        co_return base::cancelled("the replay diverged");
      }
    }
    ++log->model_calls_served;
    co_return model_result_from_record(rec->payload);
  }
  if (!services_.engine) co_return base::unavailable("no model is available to this run");
  const auto t0 = Clock::now();
  auto call = services_.engine->tool_call(std::move(req));
  base::Result<engine::ToolCallResult> r = co_await std::move(call);
  if (log) {
    LiveCall lc;
    lc.step_path = path;
    lc.attempt = attempt;
    lc.turn = turn;
    if (rec) {
      const Json* out = rec->payload.find("output");
      lc.recorded = out ? *out : Json();
      lc.recorded_ms = double_field(rec->payload, "ms");
    }
    lc.new_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (r.ok()) {
      lc.got = model_output_json(*r);
    } else {
      lc.error = r.status().message();
    }
    log->live_calls.push_back(std::move(lc));
  }
  co_return r;
}

asio::awaitable<tools::ToolResult> RunContext::call_tool(const tools::Registry* registry, std::string path,
                                                         int64_t attempt, int64_t turn, int64_t ordinal,
                                                         std::string name,
                                                         Json arguments, tools::ToolContext ctx) {
  if (ReplayLog* log = request_.replay.get()) {
    const memory::Event* call = log->take(path, attempt, et::kToolCall, ordinal);
    const memory::Event* result = log->take(path, attempt, et::kToolResult, ordinal);
    Json got = Json::object();
    got.set("name", name);
    got.set("arguments", arguments);
    Json want;
    if (call) {
      want = Json::object();
      const Json* n = call->payload.find("name");
      const Json* a = call->payload.find("arguments");
      want.set("name", n ? *n : Json());
      want.set("arguments", a ? *a : Json::object());
    }
    std::string where, a, b;
    const bool same = call && !first_difference(want, got, "", &where, &a, &b);
    if (same && result) {
      ++log->tool_results_served;
      co_return tool_result_from_record(result->payload);
    }
    if (log->strict()) {
      Divergence d;
      d.step_path = path;
      d.attempt = attempt;
      d.turn = turn;
      d.what = "tool call";
      if (!call) {
        d.expected = "no tool call here in the record";
        d.got = got.dump();
      } else if (!same) {
        d.field = where;
        d.expected = a;
        d.got = b;
      } else {
        d.what = "tool result";
        d.expected = "a recorded result";
        d.got = "the record has the call but no result (the recorded run stopped during it)";
      }
      log->diverge(std::move(d));
      co_return tools::ToolResult::failure(tools::ToolErrorKind::kCancelled, "the replay diverged");
    }
    ++log->tools_run_live;
  }
  auto op = registry->invoke(name, std::move(arguments), std::move(ctx));
  co_return co_await std::move(op);
}

}  // namespace dloop::runtime
