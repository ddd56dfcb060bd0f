// The request guards of `dloop serve`: Host, Origin, Content-Type, bearer token, CORS fields and
// the command-tool test. See guards.h; docs/server.md "Threat model" is the user-facing account.
#include "guards.h"

#include <algorithm>
#include <cctype>

#include <boost/asio/ip/address.hpp>

#include "dloop/base/strings.h"

namespace dloop::server {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool iequals(std::string_view a, std::string_view b) { return a.size() == b.size() && lower(a) == lower(b); }

// "name[:port]" or "[v6][:port]" -> (name without brackets, port text); false when malformed.
bool split_host(std::string_view host, std::string* name, std::string* port) {
  if (host.empty()) return false;
  if (host.front() == '[') {
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    *name = std::string(host.substr(1, close - 1));
    std::string_view rest = host.substr(close + 1);
    if (rest.empty()) return true;
    if (rest.front() != ':') return false;
    *port = std::string(rest.substr(1));
  } else {
    const size_t colon = host.find(':');
    if (colon != host.rfind(':')) return false;  // a bare IPv6 literal is not a valid Host
    *name = std::string(host.substr(0, colon));
    if (colon != std::string_view::npos) *port = std::string(host.substr(colon + 1));
  }
  if (name->empty()) return false;
  if (port->empty()) return host.back() != ':';
  if (port->size() > 5 || !std::all_of(port->begin(), port->end(), [](unsigned char c) { return std::isdigit(c); })) return false;
  return std::stoi(*port) <= 65535;
}

bool is_ip_literal(const std::string& name, bool* loopback) {
  boost::system::error_code ec;
  const auto addr = boost::asio::ip::make_address(name, ec);
  if (ec) return false;
  *loopback = addr.is_loopback();
  return true;
}

}  // namespace

bool host_header_allowed(std::string_view host, const ServerOptions& options, uint16_t bound_port) {
  host = base::trim(host);
  if (host.empty()) return true;
  for (const auto& allowed : options.allowed_hosts) {
    if (iequals(host, allowed)) return true;  // an entry with its own port matches exactly
  }
  std::string name, port;
  if (!split_host(host, &name, &port)) return false;
  name = lower(name);
  if (name.size() > 1 && name.back() == '.') name.pop_back();  // "localhost." is localhost too
  for (const auto& allowed : options.allowed_hosts) {
    if (iequals(name, allowed)) return true;  // a configured name: any port (a reverse proxy's)
  }
  if (!port.empty() && std::stoi(port) != bound_port) return false;
  if (name == "localhost") return true;
  bool loopback = false;
  const bool literal = is_ip_literal(name, &loopback);
  if (literal && loopback) return true;
  std::string bound = lower(options.host);
  if (!bound.empty() && bound.front() == '[' && bound.back() == ']') bound = bound.substr(1, bound.size() - 2);
  if (name == bound) return true;
  // Bound to every address: any IP literal names this server (a rebinding attack sends a name).
  return literal && (bound == "0.0.0.0" || bound == "::");
}

std::optional<ApiError> check_host_and_origin(const Server::Impl& s, const Request& req) {
  if (auto it = req.find(http::field::host); it != req.end() && !host_header_allowed(it->value(), s.opt, s.port)) {
    return ApiError{421, "invalid_request_error",
                    "The Host header '" + std::string(it->value()) +
                        "' does not name this server; requests must use its address or localhost (add a name with "
                        "'dloop serve --allow-host NAME'). This check defeats DNS rebinding.",
                    "", "host_not_allowed"};
  }
  if (auto it = req.find(http::field::origin); it != req.end()) {
    std::string_view origin = base::trim(it->value());
    while (origin.size() > 1 && origin.back() == '/') origin.remove_suffix(1);
    const bool allowed = std::any_of(s.opt.allowed_origins.begin(), s.opt.allowed_origins.end(),
                                     [&](const std::string& o) { return iequals(o, origin); });
    if (!allowed) {
      return ApiError{403, "invalid_request_error",
                      "Cross-origin requests from '" + std::string(origin) +
                          "' are refused; allow an origin with 'dloop serve --allow-origin ORIGIN'.",
                      "", "origin_not_allowed"};
    }
  }
  return std::nullopt;
}

bool is_json_content_type(const Request& req) {
  auto it = req.find(http::field::content_type);
  if (it == req.end()) return false;
  std::string_view v = it->value();
  if (auto semi = v.find(';'); semi != std::string_view::npos) v = v.substr(0, semi);
  return iequals(base::trim(v), "application/json");
}

ApiError unsupported_media_type(const Request& req) {
  auto it = req.find(http::field::content_type);
  const std::string got = it == req.end() ? "no Content-Type" : "Content-Type '" + std::string(it->value()) + "'";
  return ApiError{415, "invalid_request_error",
                  "This endpoint accepts only 'Content-Type: application/json' bodies (got " + got + ").", "",
                  "unsupported_media_type"};
}

bool authorized(const Server::Impl& s, const Request& req) {
  if (s.opt.api_key.empty()) return true;
  auto it = req.find(http::field::authorization);
  if (it == req.end()) return false;
  std::string_view v = base::trim(it->value());
  const size_t space = v.find(' ');
  if (space == std::string_view::npos || !iequals(v.substr(0, space), "bearer")) return false;  // RFC 9110: any case
  return api_key_matches(base::trim(v.substr(space + 1)), s.opt.api_key);
}

std::vector<std::pair<std::string, std::string>> cors_fields(const Request& req) {
  auto it = req.find(http::field::origin);
  if (it == req.end()) return {};
  return {{"Access-Control-Allow-Origin", std::string(base::trim(it->value()))}, {"Vary", "Origin"}};
}

std::optional<std::string> command_tool_of(const workflows::Workflow& wf) {
  for (const auto& t : wf.tools) {
    if (const auto* b = std::get_if<workflows::BuiltinTool>(&t.spec); b && b->use == "shell") return std::string("shell");
    if (t.is_command()) return "command tool '" + t.name + "'";
    if (const auto* m = std::get_if<workflows::McpServer>(&t.spec); m && !m->command.empty()) {
      return "MCP server '" + m->command + "'";
    }
  }
  return std::nullopt;
}

}  // namespace dloop::server
