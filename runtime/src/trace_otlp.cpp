// OTLP/JSON export of a run (trace.h): OpenTelemetry GenAI spans built from the event log.
// invoke_workflow (the run) > invoke_agent / step (each step attempt, nested like the steps) >
// chat (a model call) and execute_tool (a tool call). Content attributes (gen_ai.input.messages,
// gen_ai.tool.call.arguments, ...) are the opt-in ones of the conventions; they are included
// because a trace is for debugging, and redacted like the JSONL export. Pure; thread-safe.
#include <cstdlib>
#include <map>
#include <tuple>

#include "dloop/runtime/executor.h"
#include "dloop/runtime/trace.h"

namespace dloop::runtime {

using base::Json;
namespace et = memory::event_type;

namespace {

constexpr int kSpanKindInternal = 1;  // SPAN_KIND_INTERNAL
constexpr int kStatusOk = 1;
constexpr int kStatusError = 2;

// Hex ids derived from the run id, so that two exports of one run are identical.
std::string hex_id(const std::string& seed, size_t hex_chars) {
  return sha256_hex(seed).substr(7, hex_chars);  // after "sha256:"
}

Json attr(const std::string& key, Json value) {
  Json v = Json::object();
  if (value.is_string()) {
    v.set("stringValue", value);
  } else if (value.is_bool()) {
    v.set("boolValue", value);
  } else if (value.is_int()) {
    v.set("intValue", std::to_string(value.as_int()));  // int64 is a string in OTLP/JSON
  } else if (value.is_double()) {
    v.set("doubleValue", value);
  } else if (value.is_array()) {
    Json values = Json::array();
    for (const Json& item : value.as_array()) values.push_back(*attr("", item).find("value"));
    Json arr = Json::object();
    arr.set("values", std::move(values));
    v.set("arrayValue", std::move(arr));
  } else {
    v.set("stringValue", value.dump());  // objects and null as JSON text
  }
  Json a = Json::object();
  a.set("key", key);
  a.set("value", std::move(v));
  return a;
}

std::string nanos(int64_t unix_ms) { return std::to_string(unix_ms) + "000000"; }

struct Span {
  std::string id;
  std::string parent;
  std::string name;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  Json attributes = Json::array();
  bool error = false;
  std::string message;

  void set(const std::string& key, Json value) { attributes.push_back(attr(key, std::move(value))); }
};


std::string text_of(const Json* v) { return v && v->is_string() ? v->as_string() : ""; }

double number_of(const Json* v) { return v && v->is_number() ? v->as_double() : 0; }

// The step path of the container a step runs in, and that container's attempt:
// "loop[2]/child" -> ("loop", 1); "retry@2/child" -> ("retry", 2); "top" -> ("", 0).
std::pair<std::string, int64_t> parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {"", 0};
  std::string p = path.substr(0, slash);
  if (!p.empty() && p.back() == ']') {
    const size_t open = p.rfind('[');
    if (open != std::string::npos) p.resize(open);
  }
  int64_t attempt = 1;
  if (const size_t at = p.rfind('@'); at != std::string::npos && p.find('/', at) == std::string::npos) {
    attempt = std::atoll(p.c_str() + at + 1);
    p.resize(at);
  }
  return {p, attempt};
}

// The chat messages of a recorded request in the conventions' shape: [{role, parts: [{type, content}]}].
Json input_messages(const Json* request) {
  Json out = Json::array();
  const Json* msgs = request ? request->find("messages") : nullptr;
  if (!msgs || !msgs->is_array()) return out;
  for (const Json& m : msgs->as_array()) {
    Json part = Json::object();
    part.set("type", "text");
    part.set("content", m.find("content") ? *m.find("content") : Json(""));
    Json parts = Json::array();
    parts.push_back(std::move(part));
    Json msg = Json::object();
    msg.set("role", text_of(m.find("role")));
    msg.set("parts", std::move(parts));
    out.push_back(std::move(msg));
  }
  return out;
}

Json output_messages(const Json* output) {
  Json part = Json::object();
  std::string finish = "stop";
  if (output && text_of(output->find("type")) == "call") {
    part.set("type", "tool_call");
    part.set("name", text_of(output->find("name")));
    part.set("arguments", output->find("arguments") ? *output->find("arguments") : Json::object());
    finish = "tool_call";
  } else {
    part.set("type", "text");
    part.set("content", output ? text_of(output->find("text")) : "");
  }
  Json parts = Json::array();
  parts.push_back(std::move(part));
  Json msg = Json::object();
  msg.set("role", "assistant");
  msg.set("parts", std::move(parts));
  msg.set("finish_reason", finish);
  Json out = Json::array();
  out.push_back(std::move(msg));
  return out;
}

std::string model_name(const Json& payload) {
  std::string m = text_of(payload.find("model"));
  if (const size_t slash = m.rfind('/'); slash != std::string::npos) m = m.substr(slash + 1);
  return m.empty() ? "dloop" : m;
}

}  // namespace

Json trace_otlp(const memory::Run& run, const std::vector<memory::Event>& events) {
  const auto secrets = run_secrets(events);
  const std::string trace_id = hex_id("trace:" + run.id, 32);
  auto span_id = [&](const std::string& what) { return hex_id("span:" + run.id + ":" + what, 16); };
  std::vector<Span> spans;
  Span root;
  root.id = span_id("run");
  root.name = "invoke_workflow " + run.workflow;
  root.set("gen_ai.operation.name", "invoke_workflow");
  root.set("gen_ai.provider.name", "dloop");
  root.set("gen_ai.workflow.name", run.workflow);
  root.set("gen_ai.conversation.id", run.id);
  root.set("dloop.run.id", run.id);
  root.set("dloop.run.status", memory::run_status_name(run.status));
  root.set("dloop.run.inputs", redact(run.inputs, secrets).dump());
  root.start_ms = events.empty() ? parse_iso_ms(run.created_at) : parse_iso_ms(events.front().ts);
  root.end_ms = events.empty() ? root.start_ms : parse_iso_ms(events.back().ts);
  if (run.status == memory::RunStatus::kFailed) {
    root.error = true;
    root.message = run.error;
  }

  std::map<std::pair<std::string, int64_t>, size_t> steps;  // (path, attempt) -> spans index
  std::map<std::string, size_t> tools;                      // tool call id -> spans index
  auto parent_span = [&](const std::string& path) -> std::string {
    auto [p, attempt] = parent_of(path);
    while (!p.empty()) {
      auto it = steps.find({p, attempt});
      if (it != steps.end()) return spans[it->second].id;
      std::tie(p, attempt) = parent_of(p);
    }
    return root.id;
  };
  for (const auto& ev : events) {
    const Json payload = redact(ev.payload, secrets);
    const int64_t ts = parse_iso_ms(ev.ts);
    if (ev.type == et::kStepStarted || ev.type == et::kStepSkipped) {
      Span s;
      const std::string kind = text_of(payload.find("kind"));
      s.id = span_id("step:" + ev.step_path + "@" + std::to_string(ev.attempt));
      s.parent = parent_span(ev.step_path);
      const std::string id = ev.step_path.substr(ev.step_path.rfind('/') == std::string::npos ? 0 : ev.step_path.rfind('/') + 1);
      if (kind == "agent") {
        s.name = "invoke_agent " + id;
        s.set("gen_ai.operation.name", "invoke_agent");
        s.set("gen_ai.provider.name", "dloop");
        s.set("gen_ai.agent.name", id);
      } else {
        s.name = "step " + id;
      }
      s.set("dloop.step.path", ev.step_path);
      s.set("dloop.step.kind", ev.type == et::kStepSkipped ? Json("skipped") : Json(kind));
      s.set("dloop.step.attempt", ev.attempt);
      s.start_ms = s.end_ms = ts;
      steps[{ev.step_path, ev.attempt}] = spans.size();
      spans.push_back(std::move(s));
    } else if (ev.type == et::kStepCompleted || ev.type == et::kStepFailed) {
      auto it = steps.find({ev.step_path, ev.attempt});
      if (it == steps.end()) continue;
      Span& s = spans[it->second];
      s.end_ms = ts;
      if (ev.type == et::kStepFailed) {
        const Json* e = payload.find("error");
        s.error = true;
        s.message = e ? text_of(e->find("message")) : "";
        s.set("error.type", e ? text_of(e->find("code")) : "");
      } else if (const Json* out = payload.find("output")) {
        s.set("dloop.step.output", out->dump());
      }
    } else if (ev.type == et::kModelCall) {
      Span s;
      s.id = span_id("model:" + std::to_string(ev.seq));
      auto it = steps.find({ev.step_path, ev.attempt});
      s.parent = it != steps.end() ? spans[it->second].id : root.id;
      const std::string model = model_name(payload);
      s.name = "chat " + model;
      const double ms = number_of(payload.find("ms"));
      const Json* started = payload.find("started_ms");
      s.start_ms = started && started->is_number() ? static_cast<int64_t>(started->as_double())
                                                  : ts - static_cast<int64_t>(ms);
      s.end_ms = s.start_ms + static_cast<int64_t>(ms);
      const Json* request = payload.find("request");
      const Json* output = payload.find("output");
      s.set("gen_ai.operation.name", "chat");
      s.set("gen_ai.provider.name", "dloop");
      s.set("gen_ai.request.model", model);
      s.set("gen_ai.response.model", model);
      s.set("gen_ai.conversation.id", run.id);
      const bool call = output && text_of(output->find("type")) == "call";
      s.set("gen_ai.output.type", call || (request && request->find("output_schema") &&
                                           !request->find("output_schema")->is_null())
                                      ? "json"
                                      : "text");
      Json reasons = Json::array();
      reasons.push_back(call ? "tool_call" : "stop");
      s.set("gen_ai.response.finish_reasons", std::move(reasons));
      s.set("gen_ai.usage.input_tokens", static_cast<int64_t>(number_of(payload.find("prompt_tokens"))));
      s.set("gen_ai.usage.output_tokens", static_cast<int64_t>(number_of(payload.find("completion_tokens"))));
      s.set("gen_ai.input.messages", input_messages(request).dump());
      s.set("gen_ai.output.messages", output_messages(output).dump());
      if (request && request->find("tool_definitions")) {
        Json defs = Json::array();
        for (const Json& d : request->find("tool_definitions")->as_array()) {
          Json def = d;
          def.set("type", "function");
          defs.push_back(std::move(def));
        }
        s.set("gen_ai.tool.definitions", defs.dump());
      }
      if (request && request->find("reasoning")) s.set("dloop.reasoning_effort", *request->find("reasoning"));
      s.set("dloop.agent.turn", ev.turn);
      s.set("dloop.forward_passes", static_cast<int64_t>(number_of(payload.find("forward_passes"))));
      s.set("dloop.denoising_steps", static_cast<int64_t>(number_of(payload.find("steps"))));
      spans.push_back(std::move(s));
    } else if (ev.type == et::kToolCall) {
      Span s;
      const std::string call_id = text_of(payload.find("id"));
      s.id = span_id("tool:" + std::to_string(ev.seq));
      auto it = steps.find({ev.step_path, ev.attempt});
      s.parent = it != steps.end() ? spans[it->second].id : root.id;
      const std::string name = text_of(payload.find("name"));
      s.name = "execute_tool " + name;
      s.start_ms = s.end_ms = ts;
      s.set("gen_ai.operation.name", "execute_tool");
      s.set("gen_ai.provider.name", "dloop");
      s.set("gen_ai.tool.name", name);
      s.set("gen_ai.tool.call.id", call_id);
      s.set("gen_ai.tool.type", "function");
      s.set("gen_ai.tool.call.arguments", payload.find("arguments") ? payload.find("arguments")->dump() : "{}");
      s.set("dloop.step.attempt", ev.attempt);
      if (ev.turn > 0) s.set("dloop.agent.turn", ev.turn);
      tools[call_id] = spans.size();
      spans.push_back(std::move(s));
    } else if (ev.type == et::kToolResult) {
      auto it = tools.find(text_of(payload.find("id")));
      if (it == tools.end()) continue;
      Span& s = spans[it->second];
      const double ms = number_of(payload.find("ms"));
      const Json* started = payload.find("started_ms");
      s.start_ms = started && started->is_number() ? static_cast<int64_t>(started->as_double())
                                                  : ts - static_cast<int64_t>(ms);
      s.end_ms = s.start_ms + static_cast<int64_t>(ms);
      if (const Json* r = payload.find("result")) {
        s.set("gen_ai.tool.call.result", r->dump());
      } else {
        const Json* e = payload.find("error");
        s.error = true;
        s.message = e ? text_of(e->find("message")) : "";
        s.set("error.type", e ? text_of(e->find("code")) : "");
      }
    }
  }
  spans.insert(spans.begin(), std::move(root));

  Json out_spans = Json::array();
  for (const Span& s : spans) {
    Json j = Json::object();
    j.set("traceId", trace_id);
    j.set("spanId", s.id);
    if (!s.parent.empty()) j.set("parentSpanId", s.parent);
    j.set("name", s.name);
    j.set("kind", kSpanKindInternal);
    j.set("startTimeUnixNano", nanos(s.start_ms));
    j.set("endTimeUnixNano", nanos(std::max(s.start_ms, s.end_ms)));
    j.set("attributes", s.attributes);
    Json status = Json::object();
    status.set("code", s.error ? kStatusError : kStatusOk);
    if (s.error) status.set("message", s.message);
    j.set("status", std::move(status));
    out_spans.push_back(std::move(j));
  }
  Json scope = Json::object();
  scope.set("name", "dloop");
  scope.set("version", DLOOP_VERSION);
  Json scope_spans = Json::object();
  scope_spans.set("scope", std::move(scope));
  scope_spans.set("spans", std::move(out_spans));
  Json resource = Json::object();
  Json rattrs = Json::array();
  rattrs.push_back(attr("service.name", "dloop"));
  resource.set("attributes", std::move(rattrs));
  Json rs = Json::object();
  rs.set("resource", std::move(resource));
  Json ss = Json::array();
  ss.push_back(std::move(scope_spans));
  rs.set("scopeSpans", std::move(ss));
  Json all = Json::array();
  all.push_back(std::move(rs));
  Json doc = Json::object();
  doc.set("resourceSpans", std::move(all));
  return doc;
}

}  // namespace dloop::runtime
