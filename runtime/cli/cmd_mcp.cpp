// `dloop mcp serve --workflows DIR`: dloop as an MCP server over stdio (docs/mcp.md). Every
// workflow file in DIR (*.yaml, *.yml) becomes a tool: its name is the workflow's name, its
// input schema its typed `inputs`; a tools/call runs the workflow through the same driver and
// state database as `dloop run` and answers with the outputs as structuredContent (and as JSON
// text). Both protocol eras are served: `initialize` (2025-11-25 and older) and the stateless
// `server/discover` + `_meta` of 2026-07-28. Requests are handled one at a time, in order.
// stdout carries only protocol messages; logs go to stderr.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "dloop/base/json.h"
#include "dloop/memory/store.h"
#include "dloop/runtime/driver.h"
#include "dloop/tools/builtins.h"
#include "dloop/tools/jsonrpc.h"
#include "dloop/tools/mcp_client.h"
#include "dloop/workflows/load.h"

namespace dloop::cli {

// From cmd_run.cpp.
std::string read_file_text(const std::string& path, bool* ok);
base::Result<std::string> model_for(const workflows::Workflow& wf, const ParsedArgs& a, const std::string& flow_path);

namespace {

using base::Json;
namespace fs = std::filesystem;

const std::vector<std::string> kVersions = {tools::kMcpModernVersion, tools::kMcpHandshakeVersion, "2025-06-18",
                                            "2025-03-26", "2024-11-05"};

ArgParser serve_parser() {
  ArgParser p("mcp serve", "--workflows DIR [--db PATH] [--model FILE] [--workspace DIR]",
              "Serve the workflows in DIR as MCP tools over stdio (newline-delimited JSON-RPC 2.0 on\n"
              "stdin/stdout). Each call runs the workflow like 'dloop run' and returns its outputs as\n"
              "structured content. Ends at end of input; exit 0, or 2 when a workflow file is invalid.");
  p.flag({"workflows", "DIR", "folder of workflow files (*.yaml, *.yml)"})
      .flag({"db", "PATH", "state database", false, "$DLOOP_DB or ./dloop.db"})
      .flag({"model", "FILE", "GGUF model for agent steps (overrides each workflow's model:)", false,
             "the workflow's model"})
      .flag({"workspace", "DIR", "root of file tools and tool processes", false, "the current directory"});
  return p;
}

struct Entry {
  std::shared_ptr<const workflows::Workflow> workflow;
  std::string path;  // absolute
  std::string hash;
  std::string model;  // "" when the workflow has no agent step
  Json tool;          // the tools/list entry
};

const char* json_type(workflows::InputType t) {
  switch (t) {
    case workflows::InputType::kString: return "string";
    case workflows::InputType::kInteger: return "integer";
    case workflows::InputType::kNumber: return "number";
    case workflows::InputType::kBoolean: return "boolean";
    case workflows::InputType::kObject: return "object";
    case workflows::InputType::kArray: return "array";
  }
  return "string";
}

std::string tool_name(const std::string& workflow_name) {
  std::string out;
  for (char c : workflow_name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    out.push_back(ok ? c : '_');
  }
  return out.substr(0, 128);
}

Json tool_entry(const workflows::Workflow& wf) {
  Json props = Json::object();
  Json required = Json::array();
  for (const auto& in : wf.inputs) {
    Json p = Json::object();
    p.set("type", json_type(in.type));
    if (!in.description.empty()) p.set("description", in.description);
    if (!in.enum_values.empty()) p.set("enum", Json::array(in.enum_values));
    if (in.default_value) p.set("default", *in.default_value);
    props.set(in.name, std::move(p));
    if (in.required && !in.default_value) required.push_back(in.name);
  }
  Json schema = Json::object({{"type", "object"}, {"properties", std::move(props)}});
  if (required.size() > 0) schema.set("required", std::move(required));
  schema.set("additionalProperties", false);
  Json out_props = Json::object();
  for (const auto& [name, value] : wf.outputs) out_props.set(name, Json::object());
  Json tool = Json::object();
  tool.set("name", tool_name(wf.name));
  tool.set("title", wf.name);
  tool.set("description", wf.description.empty() ? "Runs the dloop workflow '" + wf.name + "'." : wf.description);
  tool.set("inputSchema", std::move(schema));
  tool.set("outputSchema", Json::object({{"type", "object"}, {"properties", std::move(out_props)}}));
  return tool;
}

class Server {
 public:
  Server(std::vector<Entry> entries, std::shared_ptr<memory::Store> store, fs::path workspace)
      : entries_(std::move(entries)), store_(std::move(store)), workspace_(std::move(workspace)) {}

  // One answer line for a request ("" for notifications).
  std::string handle(const tools::RpcMessage& m) {
    const bool request = m.kind == tools::RpcMessage::Kind::kRequest;
    if (m.kind != tools::RpcMessage::Kind::kRequest && m.kind != tools::RpcMessage::Kind::kNotification) return "";
    if (!request) return "";  // notifications/initialized, notifications/cancelled: nothing to do
    const Json params = m.params.is_object() ? m.params : Json::object();
    const Json* meta = params.find("_meta");
    const bool modern = meta && meta->find("io.modelcontextprotocol/protocolVersion");
    if (modern) {
      const Json* v = meta->find("io.modelcontextprotocol/protocolVersion");
      if (!v->is_string() || v->as_string() != tools::kMcpModernVersion) {
        return tools::rpc_error(m.id, -32022, "unsupported protocol version " + v->dump() + "; supported: " +
                                                  tools::kMcpModernVersion);
      }
    }
    auto finish = [&](Json result) {
      if (modern) {
        result.set("resultType", "complete");
        Json rmeta = Json::object();
        rmeta.set("io.modelcontextprotocol/serverInfo", server_info());
        result.set("_meta", std::move(rmeta));
      }
      return tools::rpc_result(m.id, result);
    };
    if (m.method == "server/discover") {
      Json r = Json::object();
      r.set("supportedVersions", Json::array({tools::kMcpModernVersion}));
      r.set("capabilities", capabilities());
      r.set("ttlMs", 60000);
      r.set("cacheScope", "session");
      Json rmeta = Json::object();
      rmeta.set("io.modelcontextprotocol/serverInfo", server_info());
      r.set("_meta", std::move(rmeta));
      return tools::rpc_result(m.id, r);
    }
    if (m.method == "initialize") {
      const Json* v = params.find("protocolVersion");
      std::string version = tools::kMcpHandshakeVersion;
      if (v && v->is_string()) {
        for (size_t i = 1; i < kVersions.size(); ++i) {
          if (kVersions[i] == v->as_string()) version = v->as_string();
        }
      }
      Json r = Json::object();
      r.set("protocolVersion", version);
      r.set("capabilities", capabilities());
      r.set("serverInfo", server_info());
      r.set("instructions", "Each tool runs one dloop workflow and returns its outputs as structured content.");
      return tools::rpc_result(m.id, r);
    }
    if (m.method == "ping") return finish(Json::object());
    if (m.method == "tools/list") {
      Json list = Json::array();
      for (const auto& e : entries_) list.push_back(e.tool);
      return finish(Json::object({{"tools", std::move(list)}}));
    }
    if (m.method == "tools/call") {
      const Json* name = params.find("name");
      if (!name || !name->is_string()) return tools::rpc_error(m.id, tools::kRpcInvalidParams, "tools/call needs a string 'name'");
      const Entry* e = find(name->as_string());
      if (!e) return tools::rpc_error(m.id, tools::kRpcInvalidParams, "unknown tool '" + name->as_string() + "'");
      const Json* args = params.find("arguments");
      if (args && !args->is_object()) return tools::rpc_error(m.id, tools::kRpcInvalidParams, "'arguments' must be an object");
      return finish(call(*e, args ? *args : Json::object()));
    }
    return tools::rpc_error(m.id, tools::kRpcMethodNotFound, "method '" + m.method + "' is not supported");
  }

 private:
  static Json capabilities() { return Json::object({{"tools", Json::object({{"listChanged", false}})}}); }
  static Json server_info() { return Json::object({{"name", "dloop"}, {"version", DLOOP_VERSION}}); }

  const Entry* find(const std::string& name) const {
    for (const auto& e : entries_) {
      if (e.tool.find("name")->as_string() == name) return &e;
    }
    return nullptr;
  }

  static Json error_result(const std::string& text) {
    return Json::object({{"content", Json::array({Json::object({{"type", "text"}, {"text", text}})})}, {"isError", true}});
  }

  Json call(const Entry& e, const Json& args) {
    auto inputs = workflows::resolve_inputs(*e.workflow, args);
    if (!inputs.ok()) return error_result("invalid arguments: " + inputs.status().message());
    runtime::RunRequest r;
    r.workflow = e.workflow;
    r.workflow_path = e.path;
    r.workflow_hash = e.hash;
    r.inputs = std::move(inputs).value();
    r.workspace = workspace_;
    runtime::DriverOptions opts;
    opts.store = store_;
    if (!e.model.empty()) {
      auto& bridge = engines_[e.model];
      if (!bridge) bridge = std::make_shared<runtime::EngineBridge>(e.model);
      opts.engine = bridge;
    }
    runtime::DriverResult result = runtime::run_workflows({std::move(r)}, opts);
    const runtime::RunOutcome& run = result.runs.at(0);
    if (!run.status.ok()) {
      Json err = error_result("run " + run.run_id + " failed: " + run.status.message());
      err.set("_meta", Json::object({{"dloop/run_id", run.run_id}}));
      return err;
    }
    Json out = Json::object();
    out.set("content", Json::array({Json::object({{"type", "text"}, {"text", run.outputs.dump()}})}));
    out.set("structuredContent", run.outputs);
    out.set("_meta", Json::object({{"dloop/run_id", run.run_id}}));
    return out;
  }

  std::vector<Entry> entries_;
  std::shared_ptr<memory::Store> store_;
  fs::path workspace_;
  std::map<std::string, std::shared_ptr<runtime::EngineBridge>> engines_;
};

int serve(const std::vector<std::string>& args) {
  ArgParser parser = serve_parser();
  auto parsed = parser.parse(args, 0, 0);
  if (parser.help_requested()) {
    std::fputs(parser.usage().c_str(), stdout);
    return kExitOk;
  }
  auto usage = [](const std::string& msg) {
    std::fprintf(stderr, "dloop mcp serve: %s\n(see 'dloop mcp serve --help')\n", msg.c_str());
    return kExitUsage;
  };
  if (!parsed.ok()) return usage(parsed.status().message());
  auto dir = parsed->get("workflows");
  if (!dir) return usage("--workflows DIR is required");
  std::error_code ec;
  if (!fs::is_directory(*dir, ec)) return usage("--workflows: '" + *dir + "' is not a folder");
  std::vector<fs::path> files;
  for (const auto& it : fs::directory_iterator(*dir, ec)) {
    const auto ext = it.path().extension();
    if (it.is_regular_file() && (ext == ".yaml" || ext == ".yml")) files.push_back(it.path());
  }
  std::sort(files.begin(), files.end());
  workflows::LoadOptions lo;
  lo.builtin_tools = tools::builtin_names();
  std::vector<Entry> entries;
  std::map<std::string, std::string> names;
  int errors = 0;
  for (const auto& f : files) {
    auto loaded = workflows::parse_workflow_file(f.string(), lo);
    if (!loaded.workflow) {
      for (const auto& d : loaded.diagnostics) std::fprintf(stderr, "%s\n", d.to_string().c_str());
      ++errors;
      continue;
    }
    Entry e;
    e.workflow = std::make_shared<const workflows::Workflow>(std::move(*loaded.workflow));
    e.path = fs::absolute(f).lexically_normal().string();
    bool ok = false;
    e.hash = runtime::sha256_hex(read_file_text(f.string(), &ok));
    auto model = model_for(*e.workflow, *parsed, f.string());
    if (!model.ok()) return usage(f.string() + ": " + model.status().message());
    e.model = *model;
    e.tool = tool_entry(*e.workflow);
    const std::string name = e.tool.find("name")->as_string();
    if (auto [it, fresh] = names.emplace(name, f.string()); !fresh) {
      std::fprintf(stderr, "%s: tool name '%s' is already used by %s (workflow names must differ)\n",
                   f.string().c_str(), name.c_str(), it->second.c_str());
      ++errors;
      continue;
    }
    entries.push_back(std::move(e));
  }
  if (errors > 0) return usage(std::to_string(errors) + " invalid workflow file(s) in " + *dir);
  if (entries.empty()) return usage("no workflow files (*.yaml, *.yml) in " + *dir);
  const std::string db_path = parsed->get("db").value_or(memory::default_db_path());
  auto store = memory::Store::open(db_path);
  if (!store.ok()) {
    std::fprintf(stderr, "dloop mcp serve: %s: %s\n", db_path.c_str(), store.status().message().c_str());
    return kExitFailed;
  }
  Server server(std::move(entries), std::shared_ptr<memory::Store>(std::move(store).value()),
                fs::absolute(parsed->get("workspace").value_or(".")).lexically_normal());
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    auto msg = tools::parse_rpc_line(line);
    std::string answer;
    if (!msg.ok()) {
      const bool json = base::Json::parse(line).ok();
      answer = tools::rpc_error(Json(), json ? tools::kRpcInvalidRequest : tools::kRpcParseError, msg.status().message());
    } else {
      answer = server.handle(*msg);
    }
    if (answer.empty()) continue;
    std::fwrite(answer.data(), 1, answer.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  return kExitOk;
}

}  // namespace

int cmd_mcp(const std::vector<std::string>& args) {
  constexpr const char* kUsage =
      "usage: dloop mcp serve --workflows DIR [--db PATH] [--model FILE] [--workspace DIR]\n\n"
      "dloop as an MCP server: each workflow in DIR becomes a tool (docs/mcp.md).\n"
      "'dloop mcp serve --help' lists the options.\n";
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (args[0] == "serve") return serve(std::vector<std::string>(args.begin() + 1, args.end()));
  std::fprintf(stderr, "dloop mcp: unknown subcommand '%s' (serve)\n%s", args[0].c_str(), kUsage);
  return kExitUsage;
}

}  // namespace dloop::cli
