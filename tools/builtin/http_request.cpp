// http_request: one HTTP/1.1 request with Boost.Beast to a host on the allowlist, with a deadline
// and a response size cap. Plain http:// only: https is refused with a clear error (TLS would
// need OpenSSL and certificate configuration this build does not carry). Redirects are returned,
// not followed (a redirect could leave the allowlist). A new connection per call ("Connection:
// close"). `with:` allow_hosts (required: "host", "host:port" or "*.domain"), timeout (default
// 10s), max_response_bytes (body cap, default 1 MiB), methods (default all), headers (added to
// every request, e.g. an API key the model never sees), allow_private (default false).
//
// The URL is parsed once and the host checked is byte for byte the one the resolver gets: a host
// with a control character (a NUL that would cut the name short), space or any character a host
// name or IP literal cannot hold is refused. The resolved addresses are checked too, and the
// connection goes only to addresses that passed: loopback, private, link-local, unspecified and
// multicast addresses are refused unless allow_hosts lists that IP literal itself or
// allow_private is true (so a public name cannot be pointed at an internal service).
#include <algorithm>
#include <cctype>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "builtin/builtin.h"
#include "dloop/base/strings.h"
#include "dloop/tools/process.h"  // to_valid_utf8

namespace dloop::tools::builtin {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto kUse = asio::as_tuple(asio::use_awaitable);

struct AllowedHost {
  std::string host;       // lower case; for a wildcard, the suffix after "*."
  int port = 0;           // 0: any
  bool wildcard = false;
};

struct Config {
  std::vector<AllowedHost> allow;
  std::vector<std::string> allow_text;
  int64_t timeout_ms = 0;
  int64_t max_response = 0;
  std::vector<std::string> methods;
  std::vector<std::pair<std::string, std::string>> headers;
  bool allow_private = false;
};

struct Url {
  std::string host;  // lower case, without brackets
  int port = 80;
  std::string target;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<int> parse_port(std::string_view s) {
  if (s.empty() || s.size() > 5) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < 1 || v > 65535) return std::nullopt;
  return v;
}

// Splits "host", "host:port", "[v6]" or "[v6]:port".
bool split_host_port(std::string_view auth, std::string& host, int& port) {
  if (!auth.empty() && auth[0] == '[') {
    size_t close = auth.find(']');
    if (close == std::string_view::npos) return false;
    host = std::string(auth.substr(1, close - 1));
    auth.remove_prefix(close + 1);
    if (auth.empty()) return !host.empty();
    if (auth[0] != ':') return false;
    auto p = parse_port(auth.substr(1));
    if (!p) return false;
    port = *p;
    return !host.empty();
  }
  size_t colon = auth.rfind(':');
  host = std::string(auth.substr(0, colon));
  if (colon != std::string_view::npos) {
    auto p = parse_port(auth.substr(colon + 1));
    if (!p) return false;
    port = *p;
  }
  return !host.empty();
}

// nullopt with `why` set when the URL is not a plain-http URL we can send.
std::optional<Url> parse_url(std::string_view s, std::string& why, bool& is_https) {
  is_https = base::starts_with(lower(std::string(s.substr(0, 8))), "https://");
  if (is_https) {
    why = "https URLs are not supported by this tool (plain http only)";
    return std::nullopt;
  }
  if (!base::starts_with(lower(std::string(s.substr(0, 7))), "http://")) {
    why = "the URL must start with http://";
    return std::nullopt;
  }
  s.remove_prefix(7);
  size_t end = s.find_first_of("/?#");
  std::string_view auth = s.substr(0, end);
  std::string_view rest = end == std::string_view::npos ? std::string_view() : s.substr(end);
  if (auth.find('@') != std::string_view::npos) {
    why = "credentials in the URL are not allowed";
    return std::nullopt;
  }
  Url url;
  if (!split_host_port(auth, url.host, url.port)) {
    why = "the URL has no valid host[:port]";
    return std::nullopt;
  }
  url.host = lower(url.host);
  const bool ipv6 = url.host.find(':') != std::string::npos;
  for (char c : url.host) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
                    (ipv6 && (c == ':' || c == '%'));
    if (!ok) {
      why = "the URL's host contains a character no host name has (control characters, spaces and "
            "punctuation are refused)";
      return std::nullopt;
    }
  }
  rest = rest.substr(0, rest.find('#'));
  url.target = rest.empty() ? "/" : rest[0] == '?' ? "/" + std::string(rest) : std::string(rest);
  for (char c : url.target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7F) {
      why = "the URL contains spaces or control characters (percent-encode them)";
      return std::nullopt;
    }
  }
  return url;
}

bool host_allowed(const Config& cfg, const Url& url) {
  for (const auto& a : cfg.allow) {
    if (a.port != 0 && a.port != url.port) continue;
    if (!a.wildcard && a.host == url.host) return true;
    if (a.wildcard && url.host.size() > a.host.size() + 1 &&
        url.host.compare(url.host.size() - a.host.size(), a.host.size(), a.host) == 0 &&
        url.host[url.host.size() - a.host.size() - 1] == '.') {
      return true;
    }
  }
  return false;
}

// Loopback, private (RFC 1918, CGNAT, unique local), link-local, unspecified or multicast.
bool internal_address(const asio::ip::address& a) {
  if (a.is_loopback() || a.is_unspecified() || a.is_multicast()) return true;
  if (a.is_v6()) {
    const auto v6 = a.to_v6();
    if (v6.is_v4_mapped()) return internal_address(asio::ip::make_address_v4(asio::ip::v4_mapped, v6));
    const auto b = v6.to_bytes();
    return v6.is_link_local() || v6.is_site_local() || (b[0] & 0xfe) == 0xfc;
  }
  const uint32_t v = a.to_v4().to_uint();
  auto in = [v](uint32_t net, int bits) { return (v >> (32 - bits)) == (net >> (32 - bits)); };
  return in(0x00000000, 8) || in(0x0A000000, 8) || in(0x7F000000, 8) || in(0xAC100000, 12) ||
         in(0xC0A80000, 16) || in(0xA9FE0000, 16) || in(0x64400000, 10);
}

// An internal address may be used when the config allows it, or when allow_hosts lists this very
// IP literal (with no port, or the URL's port).
bool address_allowed(const Config& cfg, const asio::ip::address& a, int port) {
  if (cfg.allow_private || !internal_address(a)) return true;
  for (const auto& entry : cfg.allow) {
    if (entry.wildcard || (entry.port != 0 && entry.port != port)) continue;
    boost::system::error_code ec;
    auto literal = asio::ip::make_address(entry.host, ec);
    if (!ec && literal == a) return true;
  }
  return false;
}

bool valid_header(const std::string& name, const std::string& value) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return value.find_first_of("\r\n") == std::string::npos && value.find('\0') == std::string::npos;
}

class HttpRequest final : public Tool {
 public:
  HttpRequest(const BuiltinSpec& spec, Config cfg)
      : Tool(name_of(spec),
             description_of(spec, "Sends an HTTP request to an allowed host (" + join(cfg.allow_text) +
                                      "). Returns {status, headers, body}."),
             builtin_schema(R"({"type": "object", "properties": {
                 "url": {"type": "string", "description": "http://host[:port]/path?query"},
                 "method": {"enum": ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]},
                 "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                 "body": {"type": "string"}},
               "required": ["url"], "additionalProperties": false})")),
        cfg_(std::move(cfg)) {}

  asio::awaitable<ToolResult> invoke(Json args, ToolContext ctx) override {
    std::string why;
    bool https = false;
    auto url = parse_url(string_arg(args, "url"), why, https);
    if (!url) co_return fail(https ? ToolErrorKind::kDenied : ToolErrorKind::kInvalidArguments, why);
    if (!host_allowed(cfg_, *url)) {
      co_return fail(ToolErrorKind::kDenied, "host '" + url->host + ":" + std::to_string(url->port) +
                                                 "' is not allowed; allowed hosts: " + join(cfg_.allow_text));
    }
    std::string method = string_arg(args, "method", "GET");
    if (std::find(cfg_.methods.begin(), cfg_.methods.end(), method) == cfg_.methods.end()) {
      co_return fail(ToolErrorKind::kDenied, "method " + method + " is not allowed; allowed: " + join(cfg_.methods));
    }
    http::request<http::string_body> req{http::string_to_verb(method), url->target, 11};
    bool ipv6 = url->host.find(':') != std::string::npos;
    req.set(http::field::host, (ipv6 ? "[" + url->host + "]" : url->host) +
                                   (url->port == 80 ? "" : ":" + std::to_string(url->port)));
    req.set(http::field::user_agent, "dloop/" DLOOP_VERSION);
    req.set(http::field::connection, "close");
    for (const auto& [k, v] : cfg_.headers) req.set(k, v);
    if (const Json* headers = args.find("headers"); headers && headers->is_object()) {
      for (const auto& [k, v] : headers->as_object()) {
        std::string value = v.is_string() ? v.as_string() : v.dump();
        std::string key = lower(k);
        if (!valid_header(k, value) || key == "host" || key == "content-length" || key == "transfer-encoding" ||
            key == "connection") {
          co_return fail(ToolErrorKind::kInvalidArguments, "header '" + k + "' is not allowed or malformed");
        }
        req.set(k, value);
      }
    }
    if (args.find("body")) {
      req.body() = string_arg(args, "body");
      req.prepare_payload();
    }
    auto op = send(std::move(req), std::move(*url), deadline_for(ctx, cfg_.timeout_ms), method == "HEAD");
    co_return co_await std::move(op);
  }

 private:
  asio::awaitable<ToolResult> send(http::request<http::string_body> req, Url url, Clock::time_point deadline,
                                   bool head) {
    auto ex = co_await asio::this_coro::executor;
    auto timed_out = [&] { return Clock::now() >= deadline; };
    // The resolver has no deadline of its own: a timer cancels it.
    auto resolver = std::make_shared<tcp::resolver>(ex);
    asio::steady_timer resolve_timer(ex, deadline);
    resolve_timer.async_wait([resolver](boost::system::error_code ec) {
      if (!ec) resolver->cancel();
    });
    const std::string port = std::to_string(url.port);  // named: see blocking.h on GCC 12 and temporaries
    auto [rec, endpoints] = co_await resolver->async_resolve(url.host, port, kUse);
    resolve_timer.cancel();
    if (rec) co_return transport_error("resolving " + url.host, rec, timed_out());
    std::vector<tcp::endpoint> allowed;
    std::string refused;
    for (const auto& entry : endpoints) {
      if (address_allowed(cfg_, entry.endpoint().address(), url.port)) allowed.push_back(entry.endpoint());
      else if (refused.empty()) refused = entry.endpoint().address().to_string();
    }
    if (allowed.empty()) {
      co_return fail(ToolErrorKind::kDenied, "host '" + url.host + "' resolves to " + refused +
                                                 ", a loopback, private or link-local address; list that address "
                                                 "in allow_hosts or set with.allow_private: true to allow it");
    }

    beast::tcp_stream stream(ex);
    stream.expires_at(deadline);
    auto [cec, ep] = co_await stream.async_connect(allowed, kUse);
    if (cec) co_return transport_error("connecting to " + url.host, cec, timed_out());
    auto [wec, wn] = co_await http::async_write(stream, req, kUse);
    if (wec) co_return transport_error("sending the request", wec, timed_out());

    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(static_cast<uint64_t>(cfg_.max_response));
    parser.header_limit(64 * 1024);
    parser.skip(head);
    auto [ec, rn] = co_await http::async_read(stream, buffer, parser, kUse);
    if (ec == http::error::body_limit) {
      co_return fail(ToolErrorKind::kOutputTooLarge, "the response body is larger than " +
                                                         std::to_string(cfg_.max_response) + " bytes");
    }
    if (ec) co_return transport_error("reading the response", ec, timed_out());
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);

    const auto& res = parser.get();
    Json headers = Json::object();
    for (const auto& field : res) {
      std::string name(field.name_string());
      std::string value = to_valid_utf8(std::string(field.value()));
      if (Json* prev = headers.find(name)) *prev = Json(prev->as_string() + ", " + value);
      else headers.set(name, value);
    }
    Json out = Json::object();
    out.set("status", static_cast<int>(res.result_int()));
    out.set("headers", std::move(headers));
    out.set("body", to_valid_utf8(res.body()));
    co_return ToolResult::success(std::move(out));
  }

  static ToolResult transport_error(const std::string& doing, const boost::system::error_code& ec, bool timed_out) {
    if (ec == beast::error::timeout || (timed_out && ec == asio::error::operation_aborted)) {
      return fail(ToolErrorKind::kTimeout, doing + " timed out");
    }
    if (ec == asio::error::operation_aborted) return fail(ToolErrorKind::kCancelled, doing + " was cancelled");
    return fail(ToolErrorKind::kFailed, doing + " failed: " + ec.message());
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
  }

  Config cfg_;
};

}  // namespace

base::Result<std::shared_ptr<Tool>> make_http_request(const BuiltinSpec& spec, const BuiltinEnv&) {
  const std::string name = name_of(spec);
  DLOOP_ASSIGN_OR_RETURN(auto with, WithConfig::open(name, spec.with, {"allow_hosts", "timeout", "max_response_bytes",
                                                                       "methods", "headers", "allow_private"}));
  Config cfg;
  DLOOP_ASSIGN_OR_RETURN(cfg.allow_text, with.get_string_list("allow_hosts"));
  if (cfg.allow_text.empty()) {
    return base::invalid_argument(name + ": with.allow_hosts is required: the hosts this tool may call, e.g. "
                                         "[api.example.com, \"localhost:8080\", \"*.internal.example\"]");
  }
  for (const auto& text : cfg.allow_text) {
    AllowedHost a;
    std::string host;
    if (!split_host_port(text, host, a.port)) return base::invalid_argument(name + ": bad entry in allow_hosts: '" + text + "'");
    a.host = lower(host);
    if (base::starts_with(a.host, "*.")) {
      a.wildcard = true;
      a.host = a.host.substr(2);
    }
    cfg.allow.push_back(std::move(a));
  }
  DLOOP_ASSIGN_OR_RETURN(cfg.timeout_ms, with.get_duration_ms("timeout", 10'000));
  DLOOP_ASSIGN_OR_RETURN(cfg.max_response, with.get_int("max_response_bytes", 1 << 20, 1, int64_t{1} << 30));
  DLOOP_ASSIGN_OR_RETURN(cfg.methods, with.get_string_list("methods"));
  if (cfg.methods.empty()) cfg.methods = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"};
  for (auto& m : cfg.methods) {
    for (char& c : m) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (http::string_to_verb(m) == http::verb::unknown) return base::invalid_argument(name + ": unknown method '" + m + "'");
  }
  DLOOP_ASSIGN_OR_RETURN(cfg.headers, with.get_string_map("headers"));
  DLOOP_ASSIGN_OR_RETURN(cfg.allow_private, with.get_bool("allow_private", false));
  for (const auto& [k, v] : cfg.headers) {
    if (!valid_header(k, v)) return base::invalid_argument(name + ": bad header '" + k + "' in with.headers");
  }
  return std::shared_ptr<Tool>(std::make_shared<HttpRequest>(spec, std::move(cfg)));
}

}  // namespace dloop::tools::builtin
