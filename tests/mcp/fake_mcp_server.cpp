// A deliberately unreliable MCP server for the client's failure paths (stdio, newline-delimited
// JSON-RPC 2.0). Its tools: echo (text + structuredContent), add, is_error (isError: true),
// rpc_error (a JSON-RPC error), crash (exits 3), hang (never answers), garbage (a line that is not
// JSON), big (a line of 200 000 bytes), stderr (writes to stderr, then answers). tools/list pages
// three tools at a time. Flags: --modern speaks only the stateless protocol 2026-07-28 (answers
// server/discover, rejects initialize and requests without _meta); --bad-version answers
// initialize with 1999-01-01; --die-at-start exits 4 before reading anything; --starts FILE
// appends a line to FILE at every start.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "dloop/base/json.h"

using dloop::base::Json;

namespace {

bool g_modern = false;

void send(const Json& j) {
  std::string line = j.dump();
  line += "\n";
  ::write(1, line.data(), line.size());
}

void result(const Json& id, Json r) {
  if (g_modern) r.set("resultType", "complete");
  send(Json::object({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(r)}}));
}

void error(const Json& id, int64_t code, const std::string& message) {
  send(Json::object({{"jsonrpc", "2.0"}, {"id", id}, {"error", Json::object({{"code", code}, {"message", message}})}}));
}

Json text_result(const std::string& text) {
  return Json::object({{"content", Json::array({Json::object({{"type", "text"}, {"text", text}})})}});
}

Json tool(const std::string& name, Json props, Json required) {
  Json schema = Json::object({{"$schema", "http://json-schema.org/draft-07/schema#"}, {"type", "object"},
                              {"properties", std::move(props)}, {"required", std::move(required)}});
  return Json::object({{"name", name}, {"description", "fake " + name}, {"inputSchema", std::move(schema)}});
}

Json all_tools() {
  Json str = Json::object({{"type", "string"}, {"format", "text"}});
  Json num = Json::object({{"type", "number"}});
  Json none = Json::object();
  return Json::array({tool("echo", Json::object({{"message", str}}), Json::array({"message"})),
                      tool("add", Json::object({{"a", num}, {"b", num}}), Json::array({"a", "b"})),
                      tool("is_error", none, Json::array()), tool("rpc_error", none, Json::array()),
                      tool("crash", none, Json::array()), tool("hang", none, Json::array()),
                      tool("garbage", none, Json::array()), tool("big", none, Json::array()),
                      tool("stderr", none, Json::array()), tool("odd.name/x", none, Json::array())});
}

void call(const Json& id, const Json& params) {
  const Json* n = params.find("name");
  const std::string name = n && n->is_string() ? n->as_string() : "";
  const Json* args = params.find("arguments");
  if (name == "echo") {
    const std::string msg = args && args->find("message") ? args->find("message")->as_string() : "";
    Json r = text_result("Echo: " + msg);
    r.set("structuredContent", Json::object({{"echo", msg}}));
    return result(id, std::move(r));
  }
  if (name == "add") {
    double a = args->find("a")->as_double(), b = args->find("b")->as_double();
    return result(id, text_result("sum " + std::to_string(static_cast<int64_t>(a + b))));
  }
  if (name == "is_error") {
    Json r = text_result("the tool failed on purpose");
    r.set("isError", true);
    return result(id, std::move(r));
  }
  if (name == "rpc_error") return error(id, -32603, "internal failure on purpose");
  if (name == "crash") {
    std::fputs("fake server: crashing on purpose\n", stderr);
    std::fflush(stderr);
    ::_exit(3);
  }
  if (name == "hang") {
    std::this_thread::sleep_for(std::chrono::hours(1));
    return;
  }
  if (name == "garbage") {
    const char line[] = "this is not JSON\n";
    ::write(1, line, sizeof line - 1);
    return;
  }
  if (name == "big") return result(id, text_result(std::string(200000, 'x')));
  if (name == "stderr") {
    std::fputs("fake server: a line on stderr\n", stderr);
    std::fflush(stderr);
    return result(id, text_result("wrote to stderr"));
  }
  error(id, -32602, "unknown tool '" + name + "'");
}

}  // namespace

int main(int argc, char** argv) {
  bool bad_version = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--modern") g_modern = true;
    if (a == "--bad-version") bad_version = true;
    if (a == "--die-at-start") {
      std::fputs("fake server: refusing to start\n", stderr);
      return 4;
    }
    if (a == "--starts" && i + 1 < argc) std::ofstream(argv[++i], std::ios::app) << "start\n";
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    auto parsed = Json::parse(line);
    if (!parsed.ok()) {
      error(Json(), -32700, "parse error");
      continue;
    }
    const Json& m = *parsed;
    const Json* id = m.find("id");
    const Json* method = m.find("method");
    if (!method || !id) continue;  // notifications and responses
    const std::string meth = method->as_string();
    const Json params = m.find("params") ? *m.find("params") : Json::object();
    const bool has_meta = params.find("_meta") && params.find("_meta")->find("io.modelcontextprotocol/protocolVersion");
    if (meth == "server/discover") {
      if (!g_modern) {
        error(*id, -32601, "Method not found");
        continue;
      }
      result(*id, Json::object({{"supportedVersions", Json::array({"2026-07-28"})},
                                {"capabilities", Json::object({{"tools", Json::object()}})}, {"ttlMs", 60000},
                                {"cacheScope", "session"},
                                {"_meta", Json::object({{"io.modelcontextprotocol/serverInfo",
                                                         Json::object({{"name", "fake"}, {"version", "1"}})}})}}));
      continue;
    }
    if (g_modern && !has_meta) {
      error(*id, -32600, "missing _meta protocol version");
      continue;
    }
    if (meth == "initialize") {
      if (g_modern) {
        error(*id, -32601, "Method not found");
        continue;
      }
      result(*id, Json::object({{"protocolVersion", bad_version ? "1999-01-01" : "2025-11-25"},
                                {"capabilities", Json::object({{"tools", Json::object()}})},
                                {"serverInfo", Json::object({{"name", "fake"}, {"version", "1"}})}}));
    } else if (meth == "tools/list") {
      Json tools = all_tools();
      size_t start = 0;
      if (const Json* c = params.find("cursor"); c && c->is_string()) start = std::stoul(c->as_string());
      Json page = Json::array();
      for (size_t i = start; i < tools.size() && i < start + 3; ++i) page.push_back(tools.as_array()[i]);
      Json r = Json::object({{"tools", std::move(page)}});
      if (start + 3 < tools.size()) r.set("nextCursor", std::to_string(start + 3));
      result(*id, std::move(r));
    } else if (meth == "tools/call") {
      call(*id, params);
    } else if (meth == "ping") {
      result(*id, Json::object());
    } else {
      error(*id, -32601, "Method not found");
    }
  }
  return 0;
}
