// parse_chat_request(): body -> ChatRequest or a 400 naming the field; see chat_request.h.
// OpenAI rejects unknown arguments, and so does this parser, except for a list of fields that the
// OpenAI SDKs send and that do not change what dloop computes (they are accepted and ignored).
#include "dloop/server/chat_request.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "dloop/base/strings.h"

namespace dloop::server {

using base::Json;

base::Json ApiError::to_json() const {
  Json e = Json::object();
  e.set("message", message);
  e.set("type", type);
  e.set("param", param.empty() ? Json() : Json(param));
  e.set("code", code.empty() ? Json() : Json(code));
  Json body = Json::object();
  body.set("error", std::move(e));
  return body;
}

namespace {

const char* type_name(const Json& j) {
  switch (j.type()) {
    case Json::Type::kNull: return "null";
    case Json::Type::kBool: return "boolean";
    case Json::Type::kInt:
    case Json::Type::kDouble: return "number";
    case Json::Type::kString: return "string";
    case Json::Type::kArray: return "array";
    case Json::Type::kObject: return "object";
  }
  return "value";
}

ApiError wrong_type(const std::string& param, const Json& got, const char* want) {
  return bad_request(std::string("Invalid type for '").append(param).append("': expected ").append(want)
                         .append(", but got ").append(type_name(got)).append("."),
                     param, "invalid_type");
}

ApiError bad_value(const std::string& param, const std::string& why) {
  return bad_request(std::string("Invalid value for '").append(param).append("': ").append(why), param,
                     "invalid_value");
}

bool valid_function_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// A message's content: a string, null (when allowed), or an array of {type: "text", text} parts.
std::optional<ApiError> content_text(const Json* content, const std::string& param, bool null_ok, std::string* out) {
  if (content == nullptr || content->is_null()) {
    if (null_ok) return std::nullopt;
    return bad_request(std::string("Missing required parameter: '").append(param).append("'."), param,
                       "missing_required_parameter");
  }
  if (content->is_string()) {
    *out = content->as_string();
    return std::nullopt;
  }
  if (!content->is_array()) return wrong_type(param, *content, "a string or an array of content parts");
  size_t i = 0;
  for (const Json& part : content->as_array()) {
    const std::string p = param + "[" + std::to_string(i++) + "]";
    if (!part.is_object()) return wrong_type(p, part, "an object");
    const Json* type = part.find("type");
    if (type == nullptr || !type->is_string()) return bad_request("Missing required parameter: '" + p + ".type'.", p + ".type", "missing_required_parameter");
    if (type->as_string() != "text") {
      return bad_value(p + ".type", "'" + type->as_string() + "' content parts are not supported (only 'text').");
    }
    const Json* text = part.find("text");
    if (text == nullptr || !text->is_string()) return wrong_type(p + ".text", text ? *text : Json(), "a string");
    out->append(text->as_string());
  }
  return std::nullopt;
}

struct MessageState {
  std::vector<std::string> call_ids;  // ids of tool calls made by earlier assistant turns
};

std::optional<ApiError> parse_message(const Json& m, size_t index, MessageState& st, std::vector<engine::ChatMessage>& out) {
  const std::string p = "messages[" + std::to_string(index) + "]";
  if (!m.is_object()) return wrong_type(p, m, "an object");
  const Json* role = m.find("role");
  if (role == nullptr) return bad_request("Missing required parameter: '" + p + ".role'.", p + ".role", "missing_required_parameter");
  if (!role->is_string()) return wrong_type(p + ".role", *role, "a string");
  const std::string& r = role->as_string();
  for (const auto& member : m.as_object()) {
    // Clients echo the assistant message of a response back, so its output-only fields are known too.
    static constexpr std::array<std::string_view, 9> kKnown = {"role",         "content", "name",
                                                               "tool_calls",   "tool_call_id", "refusal",
                                                               "function_call", "annotations", "audio"};
    if (std::find(kKnown.begin(), kKnown.end(), member.first) == kKnown.end()) {
      return bad_request("Unrecognized message field: '" + p + "." + member.first + "'.", p + "." + member.first,
                         "unknown_parameter");
    }
  }
  if (const Json* name = m.find("name"); name != nullptr && !name->is_string()) return wrong_type(p + ".name", *name, "a string");
  engine::ChatMessage msg;
  if (r == "system" || r == "developer" || r == "user") {
    if (auto e = content_text(m.find("content"), p + ".content", false, &msg.content)) return e;
    msg.role = r == "user" ? "user" : "system";
  } else if (r == "assistant") {
    const Json* calls = m.find("tool_calls");
    const bool has_calls = calls != nullptr && !calls->is_null();
    if (auto e = content_text(m.find("content"), p + ".content", has_calls, &msg.content)) return e;
    msg.role = "assistant";
    if (has_calls) {
      if (!calls->is_array()) return wrong_type(p + ".tool_calls", *calls, "an array");
      std::string text;
      size_t k = 0;
      for (const Json& c : calls->as_array()) {
        const std::string cp = p + ".tool_calls[" + std::to_string(k++) + "]";
        if (!c.is_object()) return wrong_type(cp, c, "an object");
        const Json* id = c.find("id");
        if (id == nullptr || !id->is_string()) return wrong_type(cp + ".id", id ? *id : Json(), "a string");
        const Json* type = c.find("type");
        if (type != nullptr && !(type->is_string() && type->as_string() == "function")) {
          return bad_value(cp + ".type", "only 'function' tool calls are supported.");
        }
        const Json* fn = c.find("function");
        if (fn == nullptr || !fn->is_object()) return wrong_type(cp + ".function", fn ? *fn : Json(), "an object");
        const Json* name = fn->find("name");
        if (name == nullptr || !name->is_string()) return wrong_type(cp + ".function.name", name ? *name : Json(), "a string");
        const Json* args = fn->find("arguments");
        if (args == nullptr || !args->is_string()) return wrong_type(cp + ".function.arguments", args ? *args : Json(), "a string");
        if (!text.empty()) text += "\n";
        text += tool_call_text(name->as_string(), args->as_string());
        st.call_ids.push_back(id->as_string());
      }
      if (!msg.content.empty()) msg.content += "\n";
      msg.content += text;
    }
  } else if (r == "tool") {
    const Json* id = m.find("tool_call_id");
    if (id == nullptr) return bad_request("Missing required parameter: '" + p + ".tool_call_id'.", p + ".tool_call_id", "missing_required_parameter");
    if (!id->is_string()) return wrong_type(p + ".tool_call_id", *id, "a string");
    if (std::find(st.call_ids.begin(), st.call_ids.end(), id->as_string()) == st.call_ids.end()) {
      return bad_value(p + ".tool_call_id", "'" + id->as_string() +
                                                "' does not answer a tool call of a preceding assistant message.");
    }
    if (auto e = content_text(m.find("content"), p + ".content", false, &msg.content)) return e;
    msg.role = "tool";
  } else {
    return bad_value(p + ".role", "'" + r + "' (expected one of system, developer, user, assistant, tool).");
  }
  out.push_back(std::move(msg));
  return std::nullopt;
}

std::optional<ApiError> parse_tools(const Json& tools, const ParseLimits& limits, ChatRequest& req) {
  if (!tools.is_array()) return wrong_type("tools", tools, "an array");
  if (tools.size() > limits.max_tools) {
    return bad_value("tools", "at most " + std::to_string(limits.max_tools) + " tools are accepted, got " + std::to_string(tools.size()) + ".");
  }
  size_t i = 0;
  for (const Json& t : tools.as_array()) {
    const std::string p = "tools[" + std::to_string(i++) + "]";
    if (!t.is_object()) return wrong_type(p, t, "an object");
    const Json* type = t.find("type");
    if (type == nullptr || !type->is_string()) return wrong_type(p + ".type", type ? *type : Json(), "a string");
    if (type->as_string() != "function") return bad_value(p + ".type", "'" + type->as_string() + "' tools are not supported (only 'function').");
    const Json* fn = t.find("function");
    if (fn == nullptr || !fn->is_object()) return wrong_type(p + ".function", fn ? *fn : Json(), "an object");
    const Json* name = fn->find("name");
    if (name == nullptr || !name->is_string()) return wrong_type(p + ".function.name", name ? *name : Json(), "a string");
    if (!valid_function_name(name->as_string())) {
      return bad_value(p + ".function.name", "'" + name->as_string() + "' must match ^[a-zA-Z0-9_-]{1,64}$.");
    }
    engine::ToolDefinition def;
    def.name = name->as_string();
    if (const Json* d = fn->find("description"); d != nullptr && !d->is_null()) {
      if (!d->is_string()) return wrong_type(p + ".function.description", *d, "a string");
      def.description = d->as_string();
    }
    if (const Json* s = fn->find("strict"); s != nullptr && !s->is_null() && !s->is_bool()) {
      return wrong_type(p + ".function.strict", *s, "a boolean");
    }
    const Json* params = fn->find("parameters");
    if (params != nullptr && !params->is_null()) {
      if (!params->is_object()) return wrong_type(p + ".function.parameters", *params, "an object");
      def.parameters = *params;
    } else {
      def.parameters = Json::object({{"type", "object"}, {"properties", Json::object()}});
    }
    req.tools.push_back(std::move(def));
  }
  return std::nullopt;
}

std::optional<ApiError> function_name_of(const Json& obj, const std::string& p, std::string* out) {
  if (!obj.is_object()) return wrong_type(p, obj, "an object");
  const Json* type = obj.find("type");
  if (type == nullptr || !type->is_string() || type->as_string() != "function") {
    return bad_value(p + ".type", "expected 'function'.");
  }
  const Json* fn = obj.find("function");
  if (fn == nullptr || !fn->is_object()) return wrong_type(p + ".function", fn ? *fn : Json(), "an object");
  const Json* name = fn->find("name");
  if (name == nullptr || !name->is_string()) return wrong_type(p + ".function.name", name ? *name : Json(), "a string");
  *out = name->as_string();
  return std::nullopt;
}

bool has_tool(const ChatRequest& req, const std::string& name) {
  return std::any_of(req.tools.begin(), req.tools.end(), [&](const auto& t) { return t.name == name; });
}

std::optional<ApiError> parse_tool_choice(const Json& c, ChatRequest& req) {
  using Kind = engine::ToolChoice::Kind;
  if (c.is_string()) {
    const std::string& s = c.as_string();
    if (s == "none") req.tool_choice.kind = Kind::kNone;
    else if (s == "auto") req.tool_choice.kind = Kind::kAuto;
    else if (s == "required") req.tool_choice.kind = Kind::kRequired;
    else return bad_value("tool_choice", "'" + s + "' (expected 'none', 'auto', 'required' or an object).");
    if (req.tool_choice.kind == Kind::kRequired && req.tools.empty()) {
      return bad_value("tool_choice", "'required' but no tools are given.");
    }
    return std::nullopt;
  }
  if (!c.is_object()) return wrong_type("tool_choice", c, "a string or an object");
  const Json* type = c.find("type");
  if (type != nullptr && type->is_string() && type->as_string() == "allowed_tools") {
    const Json* at = c.find("allowed_tools");
    if (at == nullptr || !at->is_object()) return wrong_type("tool_choice.allowed_tools", at ? *at : Json(), "an object");
    const Json* mode = at->find("mode");
    if (mode == nullptr || !mode->is_string() || (mode->as_string() != "auto" && mode->as_string() != "required")) {
      return bad_value("tool_choice.allowed_tools.mode", "expected 'auto' or 'required'.");
    }
    const Json* list = at->find("tools");
    if (list == nullptr || !list->is_array()) return wrong_type("tool_choice.allowed_tools.tools", list ? *list : Json(), "an array");
    std::vector<std::string> names;
    size_t i = 0;
    for (const Json& t : list->as_array()) {
      const std::string p = "tool_choice.allowed_tools.tools[" + std::to_string(i++) + "]";
      std::string name;
      if (auto e = function_name_of(t, p, &name)) return e;
      if (!has_tool(req, name)) return bad_value(p + ".function.name", "'" + name + "' is not among the request's tools.");
      names.push_back(name);
    }
    std::erase_if(req.tools, [&](const auto& t) { return std::find(names.begin(), names.end(), t.name) == names.end(); });
    req.tool_choice.kind = mode->as_string() == "auto" ? Kind::kAuto : Kind::kRequired;
    if (req.tools.empty()) req.tool_choice.kind = Kind::kNone;
    return std::nullopt;
  }
  std::string name;
  if (auto e = function_name_of(c, "tool_choice", &name)) return e;
  if (!has_tool(req, name)) return bad_value("tool_choice.function.name", "'" + name + "' is not among the request's tools.");
  req.tool_choice = engine::ToolChoice::named(name);
  return std::nullopt;
}

std::optional<ApiError> parse_response_format(const Json& f, ChatRequest& req) {
  if (!f.is_object()) return wrong_type("response_format", f, "an object");
  const Json* type = f.find("type");
  if (type == nullptr || !type->is_string()) return wrong_type("response_format.type", type ? *type : Json(), "a string");
  const std::string& t = type->as_string();
  if (t == "text") {
    req.format = ResponseFormat::kText;
  } else if (t == "json_object") {
    req.format = ResponseFormat::kJsonObject;
    req.schema = Json::object({{"type", "object"}});
  } else if (t == "json_schema") {
    const Json* js = f.find("json_schema");
    if (js == nullptr || !js->is_object()) return wrong_type("response_format.json_schema", js ? *js : Json(), "an object");
    const Json* name = js->find("name");
    if (name == nullptr || !name->is_string()) return wrong_type("response_format.json_schema.name", name ? *name : Json(), "a string");
    if (!valid_function_name(name->as_string())) {
      return bad_value("response_format.json_schema.name", "'" + name->as_string() + "' must match ^[a-zA-Z0-9_-]{1,64}$.");
    }
    const Json* schema = js->find("schema");
    if (schema == nullptr || !schema->is_object()) return wrong_type("response_format.json_schema.schema", schema ? *schema : Json(), "an object");
    if (const Json* s = js->find("strict"); s != nullptr && !s->is_null() && !s->is_bool()) {
      return wrong_type("response_format.json_schema.strict", *s, "a boolean");
    }
    req.format = ResponseFormat::kJsonSchema;
    req.schema = *schema;
    req.schema_name = name->as_string();
  } else {
    return bad_value("response_format.type", "'" + t + "' (expected 'text', 'json_object' or 'json_schema').");
  }
  return std::nullopt;
}

std::optional<ApiError> parse_number(const Json& v, const char* param, double lo, double hi, double* out) {
  if (!v.is_number()) return wrong_type(param, v, "a number");
  const double d = v.as_double();
  if (!std::isfinite(d) || d < lo || d > hi) {
    return bad_value(param, base::format_double(d) + " is outside [" + base::format_double(lo) + ", " +
                                base::format_double(hi) + "].");
  }
  *out = d;
  return std::nullopt;
}

std::optional<ApiError> parse_stop(const Json& v, ChatRequest& req) {
  if (v.is_null()) return std::nullopt;
  if (v.is_string()) {
    if (v.as_string().empty()) return bad_value("stop", "an empty stop sequence.");
    req.stop.push_back(v.as_string());
    return std::nullopt;
  }
  if (!v.is_array()) return wrong_type("stop", v, "a string or an array of strings");
  if (v.size() > 4) return bad_value("stop", "at most 4 stop sequences.");
  for (const Json& s : v.as_array()) {
    if (!s.is_string() || s.as_string().empty()) return bad_value("stop", "every stop sequence must be a non-empty string.");
    req.stop.push_back(s.as_string());
  }
  return std::nullopt;
}

// Fields the OpenAI SDKs may send that do not change dloop's output; accepted and ignored.
constexpr std::array<std::string_view, 14> kIgnored = {
    "user", "metadata", "store", "frequency_penalty", "presence_penalty", "logit_bias", "service_tier",
    "modalities", "prediction", "realtime", "reasoning_summary", "safety_identifier", "prompt_cache_key",
    "verbosity"};

std::optional<ApiError> parse_field(const std::string& key, const Json& v, const ParseLimits& limits, ChatRequest& req) {
  if (key == "model") {
    if (!v.is_string()) return wrong_type("model", v, "a string");
    req.model = v.as_string();
  } else if (key == "messages" || key == "tools" || key == "tool_choice" || key == "response_format") {
    // handled in order by parse_chat_request
  } else if (key == "parallel_tool_calls") {
    if (!v.is_bool()) return wrong_type(key, v, "a boolean");
    req.parallel_tool_calls = v.as_bool();
  } else if (key == "max_completion_tokens" || key == "max_tokens") {
    if (v.is_null()) return std::nullopt;
    if (!v.is_int()) return wrong_type(key, v, "an integer");
    if (v.as_int() < 1 || v.as_int() > kMaxCompletionTokens) {
      return bad_value(key, std::to_string(v.as_int()) + " is outside [1, " + std::to_string(kMaxCompletionTokens) + "].");
    }
    req.max_completion_tokens = v.as_int();
  } else if (key == "temperature") {
    if (v.is_null()) return std::nullopt;
    return parse_number(v, "temperature", 0.0, 2.0, &req.temperature);
  } else if (key == "top_p") {
    if (v.is_null()) return std::nullopt;
    if (auto e = parse_number(v, "top_p", 0.0, 1.0, &req.top_p)) return e;
    if (req.top_p <= 0.0) return bad_value("top_p", "must be greater than 0.");
  } else if (key == "seed") {
    if (v.is_null()) return std::nullopt;
    if (!v.is_int()) return wrong_type(key, v, "an integer");
    req.seed = static_cast<uint64_t>(v.as_int());
  } else if (key == "reasoning_effort") {
    if (v.is_null()) return std::nullopt;
    if (!v.is_string()) return wrong_type(key, v, "a string");
    const std::string& s = v.as_string();
    if (s == "none" || s == "minimal") {
      req.effort = engine::ReasoningEffort::kInstant;
    } else if (auto e = engine::parse_reasoning_effort(s)) {
      req.effort = *e;
    } else {
      return bad_value(key, "'" + s + "' (expected instant, low, medium or high).");
    }
  } else if (key == "stream") {
    if (v.is_null()) return std::nullopt;
    if (!v.is_bool()) return wrong_type(key, v, "a boolean");
    req.stream = v.as_bool();
  } else if (key == "stream_options") {
    if (v.is_null()) return std::nullopt;
    if (!v.is_object()) return wrong_type(key, v, "an object");
    for (const auto& [k, x] : v.as_object()) {
      if (k == "include_usage") {
        if (!x.is_bool()) return wrong_type("stream_options.include_usage", x, "a boolean");
        req.include_usage = x.as_bool();
      } else if (k == "include_obfuscation") {
        if (!x.is_bool()) return wrong_type("stream_options.include_obfuscation", x, "a boolean");
      } else {
        return bad_request("Unrecognized request argument supplied: stream_options." + k, "stream_options." + k, "unknown_parameter");
      }
    }
  } else if (key == "diffusing") {
    if (!v.is_bool()) return wrong_type(key, v, "a boolean");
    req.diffusing = v.as_bool();
  } else if (key == "stop") {
    return parse_stop(v, req);
  } else if (key == "n") {
    if (v.is_null()) return std::nullopt;
    if (!v.is_int()) return wrong_type(key, v, "an integer");
    if (v.as_int() != 1) return bad_value(key, "only n = 1 is supported.");
  } else if (key == "logprobs") {
    if (v.is_null()) return std::nullopt;
    if (!v.is_bool()) return wrong_type(key, v, "a boolean");
    if (v.as_bool()) return bad_value(key, "log probabilities are not supported.");
  } else if (key == "top_logprobs") {
    if (!v.is_null()) return bad_value(key, "log probabilities are not supported.");
  } else if (std::find(kIgnored.begin(), kIgnored.end(), key) == kIgnored.end()) {
    return bad_request("Unrecognized request argument supplied: " + key, key, "unknown_parameter");
  }
  (void)limits;
  return std::nullopt;
}

}  // namespace

std::string tool_call_text(const std::string& name, const std::string& arguments_json) {
  std::string args = arguments_json;
  if (auto parsed = Json::parse(arguments_json); parsed.ok()) args = parsed->dump(Json::Style::kPython);
  std::string out = "<tool_call>{\"name\": ";
  out += base::json_quote(name);
  out += ", \"arguments\": ";
  out += args;
  out += "}</tool_call>";
  return out;
}

std::variant<base::Json, ApiError> parse_json_body(std::string_view body, size_t max_depth) {
  if (body.empty()) return bad_request("The request body is empty; expected a JSON object.", "", "invalid_json");
  auto parsed = Json::parse(body, max_depth);
  if (!parsed.ok()) {
    const base::JsonErrorPlace place = base::locate_json_error(body, max_depth);
    std::string msg = "We could not parse the JSON body of your request: ";
    if (!place.reason.empty()) {
      msg += "byte " + std::to_string(place.offset) + " (line " + std::to_string(place.line) + ", column " +
             std::to_string(place.column) + "): " + place.reason;
    } else {
      msg += parsed.status().message();
    }
    return bad_request(msg, "", "invalid_json");
  }
  if (!parsed->is_object()) return bad_request(std::string("The request body must be a JSON object, got ") + type_name(*parsed) + ".", "", "invalid_json");
  return std::move(parsed).value();
}

std::variant<ChatRequest, ApiError> parse_chat_request(std::string_view body, const ParseLimits& limits) {
  auto parsed = parse_json_body(body, limits.max_depth);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  const Json& j = std::get<Json>(parsed);
  ChatRequest req;
  for (const auto& [key, value] : j.as_object()) {
    if (auto e = parse_field(key, value, limits, req)) return *e;
  }
  if (j.find("model") == nullptr) return bad_request("Missing required parameter: 'model'.", "model", "missing_required_parameter");
  const Json* messages = j.find("messages");
  if (messages == nullptr) return bad_request("Missing required parameter: 'messages'.", "messages", "missing_required_parameter");
  if (!messages->is_array()) return wrong_type("messages", *messages, "an array");
  if (messages->size() == 0) return bad_value("messages", "the list is empty; at least one message is required.");
  if (messages->size() > limits.max_messages) {
    return bad_value("messages", "at most " + std::to_string(limits.max_messages) + " messages are accepted.");
  }
  MessageState st;
  for (size_t i = 0; i < messages->size(); ++i) {
    if (auto e = parse_message(messages->as_array()[i], i, st, req.messages)) return *e;
  }
  if (const Json* tools = j.find("tools"); tools != nullptr && !tools->is_null()) {
    if (auto e = parse_tools(*tools, limits, req)) return *e;
  }
  req.tool_choice.kind = req.tools.empty() ? engine::ToolChoice::Kind::kNone : engine::ToolChoice::Kind::kAuto;
  if (const Json* choice = j.find("tool_choice"); choice != nullptr && !choice->is_null()) {
    if (auto e = parse_tool_choice(*choice, req)) return *e;
  }
  if (const Json* f = j.find("response_format"); f != nullptr && !f->is_null()) {
    if (auto e = parse_response_format(*f, req)) return *e;
  }
  // The engine's own checks (schema subset the decoder can guarantee, duplicate names), before any
  // forward pass; the message keeps the engine's JSON path ("tools[0] 'f': #/properties/x: ...").
  engine::ToolCallRequest probe;
  probe.messages = req.messages;
  probe.tools = req.tools;
  probe.tool_choice = req.tool_choice;
  if (req.format == ResponseFormat::kJsonSchema) probe.output_schema = req.schema;
  if (base::Status st = engine::validate_tool_call_request(probe); !st.ok()) {
    const bool schema = base::starts_with(st.message(), "output_schema");
    std::string msg = st.message();
    if (schema) msg = "response_format.json_schema.schema" + msg.substr(13);
    return bad_request("Invalid schema: " + msg, schema ? "response_format" : "tools", "invalid_schema");
  }
  if (req.diffusing && !req.stream) return bad_value("diffusing", "needs 'stream': true.");
  if (req.include_usage && !req.stream) {
    return bad_value("stream_options", "is only allowed when 'stream' is true.");
  }
  return req;
}

}  // namespace dloop::server
