// A run's MCP servers: configuration from the workflow, stderr capture, shutdown. See mcp_servers.h.
#include "mcp_servers.h"

#include <map>

#include <boost/asio/this_coro.hpp>

#include "dloop/base/log.h"

namespace dloop::runtime {

namespace asio = boost::asio;
using base::Json;

struct McpServers::Log {
  static constexpr size_t kMaxBytes = 64 * 1024;
  struct Server {
    Json lines = Json::array();
    size_t bytes = 0;
    bool truncated = false;
  };
  std::map<std::string, Server> servers;  // by label
};

McpServers::McpServers() : log_(std::make_shared<Log>()) {}

asio::awaitable<base::Result<std::vector<std::shared_ptr<tools::Tool>>>> McpServers::start(
    const workflows::ToolSpec& spec, const workflows::EvalContext& ctx, std::filesystem::path base_dir,
    std::filesystem::path workspace) {
  const auto& m = std::get<workflows::McpServer>(spec.spec);
  const std::string where = "tool at line " + std::to_string(spec.location.line);
  if (!m.url.empty()) {
    co_return base::unimplemented(where + ": MCP over HTTP (url:) is not supported by this version; run the server "
                                          "over stdio with command:");
  }
  tools::McpServerConfig cfg;
  cfg.label = "mcp server '" + m.command + "' (line " + std::to_string(spec.location.line) + ")";
  std::string command = m.command;
  if (command.find('/') != std::string::npos && command[0] != '/') command = (base_dir / command).lexically_normal().string();
  cfg.argv.push_back(command);
  auto args = workflows::evaluate_value(m.args, ctx);
  if (!args.ok()) co_return args.status().with_context(where + ": mcp.args");
  if (args->is_array()) {
    for (const auto& a : args->as_array()) cfg.argv.push_back(a.is_string() ? a.as_string() : a.dump());
  }
  auto env = workflows::evaluate_value(m.env, ctx);
  if (!env.ok()) co_return env.status().with_context(where + ": mcp.env");
  if (env->is_object()) {
    for (const auto& [k, v] : env->as_object()) cfg.env.emplace_back(k, v.is_string() ? v.as_string() : v.dump());
  }
  if (!m.cwd.empty()) cfg.cwd = m.cwd[0] == '/' ? std::filesystem::path(m.cwd) : base_dir / m.cwd;
  else cfg.cwd = workspace;
  if (m.timeout_ms) cfg.timeout = std::chrono::milliseconds(*m.timeout_ms);
  cfg.prefix = m.prefix;
  cfg.include = m.include;
  cfg.exclude = m.exclude;

  auto log = log_;
  tools::LogSink sink = [log](base::LogLevel level, std::string_view label, std::string_view message) {
    if (base::log_enabled(level)) base::log_line(level, std::string(label).append(": ").append(message));
    auto& s = log->servers[std::string(label)];
    if (s.bytes + message.size() > Log::kMaxBytes) {
      s.truncated = true;
      return;
    }
    s.bytes += message.size();
    s.lines.push_back(std::string(message));
  };
  auto ex = co_await asio::this_coro::executor;
  auto client = tools::McpClient::create(ex, std::move(cfg), std::move(sink));
  clients_.push_back(client);
  auto made = tools::make_mcp_tools(client);
  auto tools = co_await std::move(made);
  if (!tools.ok()) co_return tools.status().with_context(where);
  co_return tools;
}

std::vector<memory::NewEvent> McpServers::take_log_events() {
  std::vector<memory::NewEvent> out;
  for (auto& [label, s] : log_->servers) {
    if (s.lines.size() == 0) continue;
    memory::NewEvent e;
    e.type = "mcp_log";
    e.payload.set("server", label);
    e.payload.set("lines", std::move(s.lines));
    e.payload.set("truncated", s.truncated);
    out.push_back(std::move(e));
  }
  log_->servers.clear();
  return out;
}

asio::awaitable<void> McpServers::stop() {
  for (auto& c : clients_) {
    auto s = c->shutdown();
    co_await std::move(s);
  }
}

}  // namespace dloop::runtime
