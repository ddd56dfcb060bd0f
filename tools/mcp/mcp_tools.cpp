// MCP server tools as dloop tools: make_mcp_tools() (list, include/exclude, prefix, names and
// schemas made acceptable to the Registry), McpTool::invoke (a tools/call through the client)
// and the conversion of a tools/call result into what the model sees. See mcp_client.h.
#include <algorithm>
#include <set>

#include "dloop/tools/jsonrpc.h"
#include "dloop/tools/mcp_client.h"

namespace dloop::tools {
namespace {

using base::Json;

class McpTool final : public Tool {
 public:
  McpTool(std::string name, std::string description, base::Schema parameters, std::shared_ptr<McpClient> client,
          std::string server_name)
      : Tool(std::move(name), std::move(description), std::move(parameters)),
        client_(std::move(client)),
        server_name_(std::move(server_name)) {}

  asio::awaitable<ToolResult> invoke(Json args, ToolContext ctx) override {
    auto call = client_->call_tool(server_name_, std::move(args), ctx.deadline);
    co_return co_await std::move(call);
  }

 private:
  std::shared_ptr<McpClient> client_;
  std::string server_name_;
};

std::string dloop_name(const std::string& prefix, const std::string& server_name) {
  std::string out = prefix;
  for (char c : server_name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    out.push_back(ok ? c : '_');
  }
  if (out.size() > 64) out.resize(64);
  return out;
}

// Annotation-like keywords that servers' generated schemas carry and dloop's subset rejects; the
// server validates the arguments anyway, so dropping them only makes dloop's check looser.
const std::set<std::string> kDropped = {"$schema", "$id", "$comment", "format", "contentEncoding",
                                        "contentMediaType", "readOnly", "writeOnly", "deprecated"};

void drop_keys(Json& schema, const std::set<std::string>& keys) {
  if (schema.is_array()) {
    for (auto& item : schema.as_array()) drop_keys(item, keys);
    return;
  }
  if (!schema.is_object()) return;
  auto& members = schema.as_object();
  members.erase(std::remove_if(members.begin(), members.end(), [&](const Json::Member& m) { return keys.count(m.first) > 0; }),
                members.end());
  for (auto& [k, v] : members) {
    // Under `properties` the keys are property names, not keywords: only descend into values.
    if (k == "properties" && v.is_object()) {
      for (auto& [pk, pv] : v.as_object()) drop_keys(pv, keys);
    } else {
      drop_keys(v, keys);
    }
  }
}

// The server's inputSchema compiled for dloop: unsupported keywords are dropped one by one (as
// compile() names them); if it still does not compile, a plain object schema.
base::Schema input_schema(Json schema, const std::string& label, const std::string& tool, const LogSink& log) {
  std::set<std::string> dropped = kDropped;
  if (!schema.is_object()) schema = Json::object();
  if (!schema.find("type")) schema.set("type", "object");
  for (int i = 0; i < 32; ++i) {
    drop_keys(schema, dropped);
    auto compiled = base::Schema::compile(schema);
    if (compiled.ok() && compiled->root().types == base::kSchemaObject) return std::move(compiled).value();
    if (compiled.ok()) break;
    const std::string& msg = compiled.status().message();
    auto at = msg.find("unsupported keyword '");
    if (at == std::string::npos) break;
    auto end = msg.find('\'', at + 21);
    if (end == std::string::npos) break;
    dropped.insert(msg.substr(at + 21, end - at - 21));
  }
  ToolContext ctx;
  ctx.log = log;
  tool_log(ctx, base::LogLevel::kWarn, label,
           "tool '" + tool + "': its input schema is outside dloop's JSON Schema subset; using {type: object}");
  return builtin_schema(R"({"type": "object"})");
}

}  // namespace

asio::awaitable<base::Result<std::vector<std::shared_ptr<Tool>>>> make_mcp_tools(std::shared_ptr<McpClient> client) {
  auto s = client->start();
  base::Status st = co_await std::move(s);
  if (!st.ok()) co_return st;
  auto l = client->list_tools();
  auto listed = co_await std::move(l);
  if (!listed.ok()) co_return listed.status();
  const McpServerConfig& cfg = client->config();
  for (const auto& want : cfg.include) {
    bool found = false;
    for (const auto& t : *listed) found = found || t.name == want;
    if (!found) {
      std::string names;
      for (const auto& t : *listed) names += (names.empty() ? "" : ", ") + t.name;
      co_return base::not_found(cfg.label + " has no tool '" + want + "' (include:); it lists: " + names);
    }
  }
  std::vector<std::shared_ptr<Tool>> out;
  for (auto& info : *listed) {
    if (!cfg.include.empty() && std::find(cfg.include.begin(), cfg.include.end(), info.name) == cfg.include.end()) continue;
    if (std::find(cfg.exclude.begin(), cfg.exclude.end(), info.name) != cfg.exclude.end()) continue;
    LogSink log;  // schema notes go to dloop's log
    base::Schema schema = input_schema(std::move(info.input_schema), cfg.label, info.name, log);
    std::string description = info.description.empty() ? "MCP tool " + info.name : info.description;
    out.push_back(std::make_shared<McpTool>(dloop_name(cfg.prefix, info.name), std::move(description),
                                            std::move(schema), client, info.name));
  }
  co_return out;
}

ToolResult mcp_call_result(const Json& result, const std::string& tool_name) {
  std::string text;
  Json others = Json::array();
  if (const Json* content = result.find("content"); content && content->is_array()) {
    for (const auto& block : content->as_array()) {
      const Json* type = block.find("type");
      const std::string kind = type && type->is_string() ? type->as_string() : "";
      if (kind == "text") {
        const Json* t = block.find("text");
        if (t && t->is_string()) text += (text.empty() ? "" : "\n") + t->as_string();
        continue;
      }
      Json summary = Json::object();
      summary.set("type", kind);
      for (const char* key : {"mimeType", "uri", "name", "title"}) {
        if (const Json* v = block.find(key)) summary.set(key, *v);
      }
      if (const Json* data = block.find("data"); data && data->is_string()) {
        summary.set("base64_bytes", static_cast<int64_t>(data->as_string().size()));
      }
      if (const Json* res = block.find("resource"); res && res->is_object()) {
        if (const Json* uri = res->find("uri")) summary.set("uri", *uri);
        if (const Json* t = res->find("text"); t && t->is_string()) summary.set("text", *t);
        if (const Json* b = res->find("blob"); b && b->is_string()) {
          summary.set("base64_bytes", static_cast<int64_t>(b->as_string().size()));
        }
      }
      others.push_back(std::move(summary));
    }
  }
  const Json* is_error = result.find("isError");
  if (is_error && is_error->is_bool() && is_error->as_bool()) {
    return ToolResult::failure(ToolErrorKind::kFailed,
                               "'" + tool_name + "' reported an error: " + (text.empty() ? "(no message)" : text));
  }
  Json out = Json::object();
  out.set("text", text);
  if (const Json* sc = result.find("structuredContent"); sc && !sc->is_null()) out.set("structured", *sc);
  if (others.size() > 0) out.set("content", std::move(others));
  return ToolResult::success(std::move(out));
}

}  // namespace dloop::tools
