// JSON-RPC 2.0 line framing and classification. See jsonrpc.h.
#include "dloop/tools/jsonrpc.h"

#include "dloop/base/strings.h"
#include "dloop/tools/process.h"

namespace dloop::tools {

using base::Json;

base::Result<RpcMessage> parse_rpc_line(std::string_view line) {
  auto parsed = Json::parse(line, 128);
  if (!parsed.ok()) return base::invalid_argument("not JSON: " + parsed.status().message());
  Json& j = *parsed;
  if (!j.is_object()) return base::invalid_argument("a JSON-RPC message must be an object, got " + rpc_excerpt(j.dump(), 80));
  const Json* version = j.find("jsonrpc");
  if (!version || !version->is_string() || version->as_string() != "2.0") {
    return base::invalid_argument("\"jsonrpc\" must be \"2.0\"");
  }
  RpcMessage m;
  if (const Json* id = j.find("id")) {
    if (!id->is_string() && !id->is_int() && !id->is_null()) {
      return base::invalid_argument("\"id\" must be a string or an integer");
    }
    m.id = *id;
  }
  const bool has_id = j.find("id") != nullptr && !m.id.is_null();
  if (const Json* method = j.find("method")) {
    if (!method->is_string() || method->as_string().empty()) {
      return base::invalid_argument("\"method\" must be a non-empty string");
    }
    m.method = method->as_string();
    if (const Json* params = j.find("params")) {
      if (!params->is_object() && !params->is_array()) return base::invalid_argument("\"params\" must be an object or an array");
      m.params = *params;
    }
    m.kind = has_id ? RpcMessage::Kind::kRequest : RpcMessage::Kind::kNotification;
    return m;
  }
  const Json* result = j.find("result");
  const Json* error = j.find("error");
  if (result && error) return base::invalid_argument("a response has both \"result\" and \"error\"");
  if (result) {
    if (!has_id) return base::invalid_argument("a result without an \"id\"");
    m.kind = RpcMessage::Kind::kResult;
    m.result = *result;
    return m;
  }
  if (error) {
    const Json* code = error->find("code");
    const Json* message = error->find("message");
    if (!error->is_object() || !code || !code->is_int()) {
      return base::invalid_argument("\"error\" must be an object with an integer \"code\"");
    }
    m.kind = RpcMessage::Kind::kError;
    m.error_code = code->as_int();
    m.error_message = message && message->is_string() ? message->as_string() : "";
    if (const Json* data = error->find("data")) m.error_data = *data;
    return m;
  }
  return base::invalid_argument("neither a request (\"method\") nor a response (\"result\" or \"error\")");
}

std::string rpc_request(const Json& id, std::string_view method, const Json& params) {
  Json j = Json::object();
  j.set("jsonrpc", "2.0");
  j.set("id", id);
  j.set("method", std::string(method));
  if (!params.is_null()) j.set("params", params);
  return j.dump();
}

std::string rpc_notification(std::string_view method, const Json& params) {
  Json j = Json::object();
  j.set("jsonrpc", "2.0");
  j.set("method", std::string(method));
  if (!params.is_null()) j.set("params", params);
  return j.dump();
}

std::string rpc_result(const Json& id, const Json& result) {
  Json j = Json::object();
  j.set("jsonrpc", "2.0");
  j.set("id", id);
  j.set("result", result);
  return j.dump();
}

std::string rpc_error(const Json& id, int64_t code, std::string_view message) {
  Json e = Json::object();
  e.set("code", code);
  e.set("message", std::string(message));
  Json j = Json::object();
  j.set("jsonrpc", "2.0");
  j.set("id", id);
  j.set("error", std::move(e));
  return j.dump();
}

std::string rpc_excerpt(std::string_view text, size_t max) {
  text = base::trim(text);
  std::string out = to_valid_utf8(text.substr(0, max));
  return text.size() > max ? out + "..." : out;
}

}  // namespace dloop::tools
