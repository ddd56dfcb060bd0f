// The request guards of `dloop serve` that stand between a browser and the API (docs/server.md,
// "Threat model"): the Host check against DNS rebinding, the Origin check against cross-site
// requests, JSON-only bodies (a cross-site form or `text/plain` POST gets 415), the bearer
// token (scheme case-insensitive), and the CORS answers for an allowed origin. Also whether a
// workflow offers command execution (shell, command tools, MCP servers started by command).
// Pure functions over the request and the options; private to runtime/server; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "dloop/workflows/workflow.h"
#include "server_impl.h"

namespace dloop::server {

// 421 host_not_allowed or 403 origin_not_allowed when the request may not be served at all.
std::optional<ApiError> check_host_and_origin(const Server::Impl& s, const Request& req);

// True when the request's Content-Type is application/json (parameters such as charset allowed).
bool is_json_content_type(const Request& req);
// The 415 answer of a JSON endpoint that got another (or no) Content-Type.
ApiError unsupported_media_type(const Request& req);

// The presented bearer token matches the configured key (true when no key is configured).
bool authorized(const Server::Impl& s, const Request& req);

// The Access-Control-* fields to add to an answer: empty unless the request carries an Origin
// header. Only requests whose Origin passed check_host_and_origin reach the writers, so an Origin
// present there is an allowed one; refusals are written against a blank request.
std::vector<std::pair<std::string, std::string>> cors_fields(const Request& req);

// The tool a workflow offers that runs programs ("shell", a command tool's name, "mcp server
// 'CMD'"), or nullopt when it offers none.
std::optional<std::string> command_tool_of(const workflows::Workflow& wf);

}  // namespace dloop::server
