// run_completion() and the OpenAI response shapes; see completion.h.
#include "completion.h"

#include <algorithm>
#include <random>

#include "dloop/engine/tool_call.h"

namespace dloop::server {

using base::Json;

engine::DecodeOptions answer_decode_options(const ChatRequest& request) {
  const engine::ReasoningPreset& preset = engine::reasoning_preset(request.effort);
  engine::DecodeOptions o;
  o.gen_length = request.max_completion_tokens > 0 ? request.max_completion_tokens : kDefaultCompletionTokens;
  o.block_length = std::min<int64_t>(preset.answer_block_length, o.gen_length);
  if (o.block_length <= 0 || o.gen_length % o.block_length != 0) o.block_length = 0;  // one block
  o.steps = o.gen_length;
  o.threshold = preset.threshold;
  o.temperature = request.temperature;
  o.top_p = request.top_p;
  o.seed = request.seed.value_or(0);
  return o;
}

bool apply_stop(std::string& text, const std::vector<std::string>& stop) {
  size_t cut = std::string::npos;
  for (const auto& s : stop) cut = std::min(cut, text.find(s));
  if (cut == std::string::npos) return false;
  text.resize(cut);
  return true;
}

namespace {

base::Result<CompletionOutput> with_tools(engine::Engine& engine, const ChatRequest& request) {
  engine::ToolCallRequest tr;
  tr.messages = request.messages;
  tr.tools = request.tools;
  tr.tool_choice = request.tool_choice;
  tr.effort = request.effort;
  if (request.format != ResponseFormat::kText) tr.output_schema = request.schema;
  tr.answer_length = std::clamp<int64_t>(
      request.max_completion_tokens > 0 ? request.max_completion_tokens : kDefaultCompletionTokens, 8, 4096);
  auto r = engine.tool_call(tr);
  if (!r.ok()) return r.status();
  CompletionOutput out;
  out.prompt_tokens = r->prompt_tokens;
  out.completion_tokens = r->completion_tokens;
  out.forward_passes = r->forward_passes;
  if (r->is_call) {
    out.is_call = true;
    out.call_name = r->name;
    out.call_arguments = r->arguments_json.dump();
    out.finish_reason = "tool_calls";
  } else {
    out.content = r->answer;
    out.finish_reason = "stop";
  }
  return out;
}

base::Result<CompletionOutput> generate(engine::Engine& engine, const ChatRequest& request,
                                        std::optional<Json> schema, const engine::StepObserver& on_step) {
  engine::GenerateRequest g;
  g.messages = request.messages;
  g.decode = answer_decode_options(request);
  g.response_format = std::move(schema);
  if (!g.response_format) g.on_step = on_step;
  auto r = engine.generate(g);
  if (!r.ok()) return r.status();
  CompletionOutput out;
  out.content = r->text;
  out.prompt_tokens = r->prompt_tokens;
  out.completion_tokens = r->completion_tokens;
  out.forward_passes = r->forward_passes;
  out.finish_reason = (g.response_format || r->stopped_by_eos) ? "stop" : "length";
  return out;
}

}  // namespace

base::Result<CompletionOutput> run_completion(engine::Engine& engine, const ChatRequest& request,
                                              const engine::StepObserver& on_step) {
  base::Result<CompletionOutput> out = base::internal_error("no completion");
  if (!request.tools.empty() && request.tool_choice.kind != engine::ToolChoice::Kind::kNone) {
    out = with_tools(engine, request);
  } else if (request.format == ResponseFormat::kJsonSchema) {
    out = generate(engine, request, request.schema, {});
  } else if (request.format == ResponseFormat::kJsonObject) {
    // JSON mode: the free answer when it already is a JSON object, else a schema-guided object
    // (which, with no properties to fill, is the smallest valid one).
    out = generate(engine, request, std::nullopt, on_step);
    if (out.ok()) {
      auto parsed = Json::parse(out->content);
      if (!parsed.ok() || !parsed->is_object()) {
        const int64_t passes = out->forward_passes;
        out = generate(engine, request, request.schema, {});
        if (out.ok()) out->forward_passes += passes;
      }
    }
  } else {
    out = generate(engine, request, std::nullopt, on_step);
  }
  if (out.ok() && !out->is_call && apply_stop(out->content, request.stop)) out->finish_reason = "stop";
  return out;
}

Json usage_json(const CompletionOutput& out) {
  Json u = Json::object();
  u.set("prompt_tokens", out.prompt_tokens);
  u.set("completion_tokens", out.completion_tokens);
  u.set("total_tokens", out.prompt_tokens + out.completion_tokens);
  u.set("prompt_tokens_details", Json::object({{"cached_tokens", 0}, {"audio_tokens", 0}}));
  u.set("completion_tokens_details", Json::object({{"reasoning_tokens", 0},
                                                   {"audio_tokens", 0},
                                                   {"accepted_prediction_tokens", 0},
                                                   {"rejected_prediction_tokens", 0}}));
  return u;
}

namespace {

Json envelope(const CompletionMeta& meta, const char* object) {
  Json j = Json::object();
  j.set("id", meta.id);
  j.set("object", object);
  j.set("created", meta.created);
  j.set("model", meta.model);
  j.set("system_fingerprint", meta.fingerprint);
  return j;
}

}  // namespace

Json completion_json(const CompletionMeta& meta, const CompletionOutput& out, const std::string& call_id) {
  Json message = Json::object();
  message.set("role", "assistant");
  message.set("content", out.is_call ? Json() : Json(out.content));
  message.set("refusal", Json());
  if (out.is_call) {
    Json fn = Json::object({{"name", out.call_name}, {"arguments", out.call_arguments}});
    Json call = Json::object({{"id", call_id}, {"type", "function"}, {"function", std::move(fn)}});
    message.set("tool_calls", Json::array({std::move(call)}));
  }
  message.set("annotations", Json::array());
  Json choice = Json::object();
  choice.set("index", 0);
  choice.set("message", std::move(message));
  choice.set("finish_reason", out.finish_reason);
  choice.set("logprobs", Json());
  Json j = envelope(meta, "chat.completion");
  j.set("choices", Json::array({std::move(choice)}));
  j.set("usage", usage_json(out));
  j.set("service_tier", "default");
  return j;
}

Json chunk_json(const CompletionMeta& meta, Json delta, const std::string& finish_reason) {
  Json choice = Json::object();
  choice.set("index", 0);
  choice.set("delta", std::move(delta));
  choice.set("finish_reason", finish_reason.empty() ? Json() : Json(finish_reason));
  choice.set("logprobs", Json());
  Json j = envelope(meta, "chat.completion.chunk");
  j.set("choices", Json::array({std::move(choice)}));
  j.set("usage", Json());
  return j;
}

Json usage_chunk_json(const CompletionMeta& meta, const CompletionOutput& out) {
  Json j = envelope(meta, "chat.completion.chunk");
  j.set("choices", Json::array());
  j.set("usage", usage_json(out));
  return j;
}

size_t complete_utf8_prefix(std::string_view s) {
  // Walk back over at most 3 continuation bytes to the lead byte of the last sequence.
  size_t i = s.size();
  size_t back = 0;
  while (i > 0 && back < 4 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) {
    --i;
    ++back;
  }
  if (i == 0) return back == 0 ? 0 : s.size();
  const auto lead = static_cast<unsigned char>(s[i - 1]);
  size_t need = 1;
  if (lead >= 0xF0) need = 4;
  else if (lead >= 0xE0) need = 3;
  else if (lead >= 0xC0) need = 2;
  return back + 1 >= need ? s.size() : i - 1;
}

std::vector<std::string> argument_fragments(const std::string& arguments, size_t piece) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < arguments.size()) {
    size_t n = std::min(piece, arguments.size() - at);
    // Never split a UTF-8 sequence: extend to the end of the character.
    while (at + n < arguments.size() && (static_cast<unsigned char>(arguments[at + n]) & 0xC0) == 0x80) ++n;
    out.push_back(arguments.substr(at, n));
    at += n;
  }
  return out;
}

std::string random_id(const char* prefix, size_t n) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng(std::random_device{}());
  std::string id = prefix;
  for (size_t i = 0; i < n; ++i) id += kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  return id;
}

}  // namespace dloop::server
