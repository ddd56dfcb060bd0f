// Agent steps: up to max_turns times, render the chat (system, prompt, earlier calls and results,
// the allowed tools), ask the engine (on its thread) for a tool call or an answer, run the call,
// and feed the result back. Each turn's model_call, tool_call and tool_result are committed in one
// transaction; the answer's model_call goes with step_completed. On resume a recorded model_call
// (by turn) and tool_result (by call) are reused instead of asking the model or running the tool.
#include "dloop/base/json_schema.h"
#include "dloop/engine/tool_call.h"
#include "run_context.h"

namespace dloop::runtime {

namespace et = memory::event_type;

namespace {

memory::NewEvent turn_event(std::string_view type, const std::string& path, int64_t attempt, int64_t turn) {
  memory::NewEvent e;
  e.type = std::string(type);
  e.step_path = path;
  e.attempt = attempt;
  e.turn = turn;
  return e;
}

}  // namespace

Json model_output_json(const engine::ToolCallResult& r) {
  Json o = Json::object();
  if (r.is_call) {
    o.set("type", "call");
    o.set("name", r.name);
    o.set("arguments", r.arguments_json);
  } else {
    o.set("type", "answer");
    o.set("text", r.answer);
  }
  return o;
}

namespace {

// The recorded request: what the workflow asked (messages, tools with their schemas, tool_choice,
// reasoning, output_schema) and the decoding settings the engine applies to it. Tool calls decode
// deterministically (no sampling), so there is no seed; `seed: null` says so in the record. The
// string slot width is the one the model decodes with (its GGUF's default unless the request sets one).
Json request_json(const engine::ToolCallRequest& req, int64_t string_slot_tokens) {
  Json j = Json::object();
  Json msgs = Json::array();
  for (const auto& m : req.messages) {
    Json mj = Json::object();
    mj.set("role", m.role);
    mj.set("content", m.content);
    msgs.push_back(std::move(mj));
  }
  j.set("messages", std::move(msgs));
  Json names = Json::array();
  for (const auto& t : req.tools) names.push_back(t.name);
  j.set("tools", std::move(names));
  Json defs = Json::array();
  for (const auto& t : req.tools) {
    Json d = Json::object();
    d.set("name", t.name);
    d.set("description", t.description);
    d.set("parameters", t.parameters);
    defs.push_back(std::move(d));
  }
  j.set("tool_definitions", std::move(defs));
  const char* choice = req.tool_choice.kind == engine::ToolChoice::Kind::kAuto       ? "auto"
                       : req.tool_choice.kind == engine::ToolChoice::Kind::kRequired ? "required"
                       : req.tool_choice.kind == engine::ToolChoice::Kind::kNone     ? "none"
                                                                                     : nullptr;
  j.set("tool_choice", choice ? Json(choice) : Json(req.tool_choice.name));
  j.set("reasoning", engine::reasoning_effort_name(req.effort));
  j.set("output_schema", req.output_schema ? *req.output_schema : Json());
  const engine::ReasoningPreset& preset = engine::reasoning_preset(req.effort);
  Json dec = Json::object();
  dec.set("threshold", preset.threshold);
  dec.set("max_commits_per_pass", preset.max_commits_per_pass);
  dec.set("slots_left_to_right", preset.slots_left_to_right);
  dec.set("cache", engine::cache_mode_name(req.cache.value_or(preset.cache)));
  dec.set("prompt_reuse", engine::prompt_reuse_name(req.prompt_reuse.value_or(preset.prompt_reuse)));
  dec.set("thinking_tokens", preset.thinking_tokens);
  dec.set("answer_block_length", preset.answer_block_length);
  dec.set("answer_length", req.answer_length);
  dec.set("string_slot_tokens", string_slot_tokens);
  dec.set("number_slot_tokens", req.number_slot_tokens);
  dec.set("seed", Json());
  j.set("decoding", std::move(dec));
  return j;
}

}  // namespace

asio::awaitable<Outcome> RunContext::run_agent(const workflows::Step& step, const workflows::AgentStep& agent,
                                               Scope& scope, const std::string& path, int64_t attempt,
                                               Deadline deadline, std::vector<memory::NewEvent>& pending) {
  (void)step;
  constexpr const char* kNoModel = "no model is available to this run";
  if (!services_.engine && !strict_replay()) co_return Outcome::fail("model_error", kNoModel);
  if (!services_.engine && request_.replay->recorded_failure(path, attempt, "model_error") == kNoModel) {
    co_return Outcome::fail("model_error", kNoModel);  // the recorded run had no model either
  }
  workflows::EvalContext ctx = eval_context(scope);
  engine::ToolCallRequest req;
  if (agent.system) {
    auto sys = workflows::evaluate_value(*agent.system, ctx);
    if (!sys.ok()) co_return Outcome::fail("any", "system: " + sys.status().message());
    req.messages.push_back({"system", workflows::to_text(*sys)});
  }
  auto prompt = workflows::evaluate_value(agent.prompt, ctx);
  if (!prompt.ok()) co_return Outcome::fail("any", "prompt: " + prompt.status().message());
  req.messages.push_back({"user", workflows::to_text(*prompt)});

  tools::Registry allowed = registry_;
  if (agent.tools) {
    auto sub = registry_.subset(*agent.tools);
    if (!sub.ok()) co_return Outcome::fail("any", sub.status().message());
    allowed = std::move(sub).value();
  }
  Json described = allowed.describe();
  for (const Json& t : described.as_array()) {
    engine::ToolDefinition def;
    def.name = t.find("name")->as_string();
    def.description = t.find("description") ? t.find("description")->as_string() : "";
    def.parameters = *t.find("parameters");
    req.tools.push_back(std::move(def));
  }
  if (auto choice = engine::parse_tool_choice(agent.tool_choice)) req.tool_choice = *choice;
  if (!agent.reasoning.empty()) {
    if (auto effort = engine::parse_reasoning_effort(agent.reasoning)) req.effort = *effort;
  }
  req.output_schema = agent.output_schema;
  std::optional<base::Schema> schema;
  if (agent.output_schema) {
    auto compiled = base::Schema::compile(*agent.output_schema);
    if (!compiled.ok()) co_return Outcome::fail("any", "output_schema: " + compiled.status().message());
    schema = std::move(compiled).value();
  }

  int64_t calls = 0;
  for (int64_t turn = 1; turn <= agent.max_turns; ++turn) {
    if (cancelled()) co_return Outcome::cancelled();
    if (Clock::now() >= deadline) co_return Outcome::fail("timeout", "the step's timeout passed before turn " + std::to_string(turn));
    std::vector<memory::NewEvent> batch;
    Json output;
    if (const auto* rec = recorded(path, attempt, et::kModelCall, turn - 1)) {
      const Json* o = rec->payload.find("output");
      output = o ? *o : Json::object();
    } else {
      Json request = request_json(req, req.string_slot_tokens);
      const int64_t started_ms = unix_ms_now();
      auto call = ask_model(path, attempt, turn, req, request);
      base::Result<engine::ToolCallResult> r = co_await std::move(call);
      if (cancelled()) co_return Outcome::cancelled();
      if (!r.ok()) co_return Outcome::fail("model_error", "turn " + std::to_string(turn) + ": " + r.status().message());
      output = model_output_json(*r);
      memory::NewEvent mc = turn_event(et::kModelCall, path, attempt, turn);
      mc.payload.set("request", request_json(req, r->string_slot_tokens));
      mc.payload.set("output", output);
      mc.payload.set("model", services_.engine ? Json(services_.engine->model_path()) : Json());
      mc.payload.set("prompt_text", r->prompt_text);
      mc.payload.set("started_ms", started_ms);
      mc.payload.set("prompt_tokens", r->prompt_tokens);
      mc.payload.set("completion_tokens", r->completion_tokens);
      mc.payload.set("forward_passes", r->forward_passes);
      mc.payload.set("steps", r->steps);
      mc.payload.set("ms", r->timings.total_ms);
      Json timings = Json::object();
      timings.set("tokenize_ms", r->timings.tokenize_ms);
      timings.set("forward_ms", r->timings.forward_ms);
      timings.set("sampling_ms", r->timings.sampling_ms);
      timings.set("total_ms", r->timings.total_ms);
      mc.payload.set("timings", std::move(timings));
      batch.push_back(std::move(mc));
    }
    const Json* type = output.find("type");
    if (!type || !type->is_string() || type->as_string() != "call") {
      const Json* text = output.find("text");
      std::string answer = text && text->is_string() ? text->as_string() : "";
      for (auto& e : batch) pending.push_back(std::move(e));
      if (!schema) co_return Outcome::ok(Json(answer));
      auto parsed = Json::parse(answer);
      if (!parsed.ok()) co_return Outcome::fail("invalid_output", "the answer is not JSON: " + parsed.status().message());
      base::Status valid = schema->validate(*parsed);
      if (!valid.ok()) co_return Outcome::fail("invalid_output", "the answer does not match output_schema: " + valid.message());
      co_return Outcome::ok(std::move(parsed).value());
    }
    const std::string name = output.find("name") ? output.find("name")->as_string() : "";
    const Json arguments = output.find("arguments") ? *output.find("arguments") : Json::object();
    const std::string call_id = path + "#" + std::to_string(attempt) + "." + std::to_string(turn);
    Json result;
    if (const auto* rec = recorded(path, attempt, et::kToolResult, calls)) {
      result = tool_result_from_record(rec->payload).to_json();  // what the model saw the first time
    } else {
      memory::NewEvent tc = turn_event(et::kToolCall, path, attempt, turn);
      tc.payload.set("id", call_id);
      tc.payload.set("name", name);
      tc.payload.set("arguments", arguments);
      batch.push_back(std::move(tc));
      const auto start = Clock::now();
      const int64_t started_ms = unix_ms_now();
      auto op = call_tool(&allowed, path, attempt, turn, calls, name, arguments, tool_context(deadline));
      tools::ToolResult tr = co_await std::move(op);
      if (!tr.ok() && tr.error().kind == tools::ToolErrorKind::kCancelled) co_return Outcome::cancelled();
      memory::NewEvent res = turn_event(et::kToolResult, path, attempt, turn);
      res.payload.set("id", call_id);
      res.payload.set("name", name);
      if (tr.ok()) {
        res.payload.set("result", tr.value());
      } else {
        Json e = Json::object();
        e.set("code", tools::tool_error_kind_name(tr.error().kind));
        e.set("message", tr.error().message);
        res.payload.set("error", std::move(e));
      }
      res.payload.set("ms", std::chrono::duration<double, std::milli>(Clock::now() - start).count());
      res.payload.set("started_ms", started_ms);
      batch.push_back(std::move(res));
      result = tr.to_json();
    }
    ++calls;
    auto c = commit(std::move(batch));
    base::Status st = co_await std::move(c);
    if (!st.ok()) co_return Outcome::fail("unavailable", st.message());
    Json call_text = Json::object();
    call_text.set("name", name);
    call_text.set("arguments", arguments);
    req.messages.push_back({"assistant", "<tool_call>" + call_text.dump(Json::Style::kPython) + "</tool_call>"});
    req.messages.push_back({"tool", result.dump(Json::Style::kPython)});
  }
  co_return Outcome::fail("any", "no answer after max_turns (" + std::to_string(agent.max_turns) + ") model calls");
}

}  // namespace dloop::runtime
