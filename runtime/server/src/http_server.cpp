// The HTTP layer of `dloop serve`: start-up checks, the accept loop, one coroutine per connection
// (Beast request parser with body/header limits and timeouts), routing, authentication, models,
// health and metrics, reply writers, and graceful shutdown. See server.h.
#include <csignal>
#include <ctime>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "dloop/base/log.h"
#include "dloop/base/strings.h"
#include "guards.h"
#include "server_impl.h"

namespace dloop::server {

using base::Json;
namespace {
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  return !ec && addr.is_loopback();
}

bool api_key_matches(std::string_view presented, std::string_view expected) {
  // Every byte of the longer string is visited and the length difference is folded in, so the
  // time depends only on the lengths, never on where the keys differ.
  const size_t n = std::max(presented.size(), expected.size());
  unsigned diff = presented.size() == expected.size() ? 0u : 1u;
  for (size_t i = 0; i < n; ++i) {
    const auto a = static_cast<unsigned char>(i < presented.size() ? presented[i] : 0);
    const auto b = static_cast<unsigned char>(i < expected.size() ? expected[i] : 0);
    diff |= static_cast<unsigned>(a ^ b);
  }
  return diff == 0;
}

// ---- reply writers ---------------------------------------------------------------------------

asio::awaitable<int> send_text(Stream& stream, const Request& req, int status, std::string body,
                               std::string content_type, bool keep_alive) {
  http::response<http::string_body> res{static_cast<http::status>(status), req.version()};
  res.set(http::field::server, "dloop/" DLOOP_VERSION);
  res.set(http::field::content_type, content_type);
  for (const auto& [k, v] : cors_fields(req)) res.set(k, v);
  res.keep_alive(keep_alive);
  res.body() = std::move(body);
  res.prepare_payload();
  stream.expires_after(kWriteTimeout);
  auto op = http::async_write(stream, res, kTuple);
  auto [ec, n] = co_await std::move(op);
  (void)n;
  co_return ec ? -1 : status;
}

asio::awaitable<int> send_json(Stream& stream, const Request& req, int status, Json body, bool keep_alive,
                               std::vector<std::pair<std::string, std::string>> headers) {
  http::response<http::string_body> res{static_cast<http::status>(status), req.version()};
  res.set(http::field::server, "dloop/" DLOOP_VERSION);
  res.set(http::field::content_type, "application/json");
  for (const auto& [k, v] : cors_fields(req)) res.set(k, v);
  for (const auto& [k, v] : headers) res.set(k, v);
  res.keep_alive(keep_alive);
  res.body() = body.dump();
  res.prepare_payload();
  stream.expires_after(kWriteTimeout);
  auto op = http::async_write(stream, res, kTuple);
  auto [ec, n] = co_await std::move(op);
  (void)n;
  co_return ec ? -1 : status;
}

asio::awaitable<int> send_error(Stream& stream, const Request& req, ApiError error, bool keep_alive) {
  std::vector<std::pair<std::string, std::string>> headers;
  if (error.status == 429 || error.status == 503) headers.emplace_back("Retry-After", "1");
  if (error.status == 401) headers.emplace_back("WWW-Authenticate", "Bearer");
  auto op = send_json(stream, req, error.status, error.to_json(), keep_alive, headers);
  co_return co_await std::move(op);
}

asio::awaitable<bool> SseWriter::start() {
  http::response<http::empty_body> res{http::status::ok, req_.version()};
  res.set(http::field::server, "dloop/" DLOOP_VERSION);
  res.set(http::field::content_type, "text/event-stream");
  res.set(http::field::cache_control, "no-cache");
  for (const auto& [k, v] : cors_fields(req_)) res.set(k, v);
  res.chunked(true);
  res.keep_alive(false);
  http::response_serializer<http::empty_body> sr{res};
  stream_.expires_after(kWriteTimeout);
  auto op = http::async_write_header(stream_, sr, kTuple);
  auto [ec, n] = co_await std::move(op);
  (void)n;
  co_return !ec;
}

asio::awaitable<bool> SseWriter::raw(std::string text) {
  stream_.expires_after(kWriteTimeout);
  auto op = asio::async_write(stream_, http::make_chunk(asio::buffer(text)), kTuple);
  auto [ec, n] = co_await std::move(op);
  (void)n;
  co_return !ec;
}

asio::awaitable<bool> SseWriter::event(std::string data, std::string name, std::string id) {
  std::string text;
  if (!id.empty()) text.append("id: ").append(id).append("\n");
  if (!name.empty()) text.append("event: ").append(name).append("\n");
  text.append("data: ").append(data).append("\n\n");
  auto op = raw(text);
  co_return co_await std::move(op);
}

asio::awaitable<bool> SseWriter::finish() {
  stream_.expires_after(kWriteTimeout);
  auto op = asio::async_write(stream_, http::make_chunk_last(), kTuple);
  auto [ec, n] = co_await std::move(op);
  (void)n;
  co_return !ec;
}

// ---- routing ---------------------------------------------------------------------------------

namespace {

Json model_json(const Server::Impl& s) {
  return Json::object({{"id", s.model_id}, {"object", "model"}, {"created", s.model_created}, {"owned_by", "dloop"}});
}

ApiError not_found_route(const Request& req) {
  return ApiError{404, "invalid_request_error",
                  std::string("Unknown request URL: ").append(std::string(req.method_string())).append(" ")
                      .append(std::string(req.target())).append(". See docs/server.md for the routes."),
                  "", "unknown_url"};
}

ApiError method_not_allowed(const Request& req, const char* allowed) {
  return ApiError{405, "invalid_request_error",
                  std::string("Method ").append(std::string(req.method_string())).append(" is not allowed on ")
                      .append(std::string(req.target())).append(" (allowed: ").append(allowed).append(")."),
                  "", "method_not_allowed"};
}

asio::awaitable<int> send_preflight(Stream& stream, const Request& req, bool keep_alive) {
  http::response<http::string_body> res{http::status::no_content, req.version()};
  res.set(http::field::server, "dloop/" DLOOP_VERSION);
  for (const auto& [k, v] : cors_fields(req)) res.set(k, v);
  res.set(http::field::allow, "GET, POST, OPTIONS");
  if (req.find(http::field::origin) != req.end()) {
    res.set(http::field::access_control_allow_methods, "GET, POST, OPTIONS");
    res.set(http::field::access_control_allow_headers, "Authorization, Content-Type, Last-Event-ID");
    res.set(http::field::access_control_max_age, "600");
  }
  res.keep_alive(keep_alive);
  res.prepare_payload();
  stream.expires_after(kWriteTimeout);
  auto op = http::async_write(stream, res, kTuple);
  auto [ec, n] = co_await std::move(op);
  (void)n;
  co_return ec ? -1 : 204;
}

asio::awaitable<int> dispatch(Server::Impl& s, Stream& stream, const Request& req, bool keep_alive, std::string* route) {
  std::string target(req.target());
  std::string query;
  if (auto q = target.find('?'); q != std::string::npos) {
    query = target.substr(q + 1);
    target.resize(q);
  }
  const auto method = req.method();
  if (method == http::verb::options) {  // a CORS preflight (its Origin, if any, passed the guard)
    *route = "preflight";
    auto op_ = send_preflight(stream, req, keep_alive);
    co_return co_await std::move(op_);
  }
  if (method == http::verb::post && !is_json_content_type(req) &&
      (!req.body().empty() || req.find(http::field::content_type) != req.end())) {
    // Bodies are JSON only: a cross-site form or text/plain POST (no preflight) never gets in. An
    // empty body without a Content-Type (POST .../cancel) carries nothing to misread.
    *route = "unsupported_media_type";
    auto op_ = send_error(stream, req, unsupported_media_type(req), keep_alive);
    co_return co_await std::move(op_);
  }
  if (target == "/healthz") {
    *route = "/healthz";
    if (method != http::verb::get) { auto op_ = send_error(stream, req, method_not_allowed(req, "GET"), keep_alive); co_return co_await std::move(op_); }
    Json body = Json::object({{"status", s.stopping ? "stopping" : "ok"},
                              {"model", s.model_id},
                              {"active_generations", s.metrics.active_generations()},
                              {"active_runs", s.metrics.active_runs()}});
    { auto op_ = send_json(stream, req, s.stopping ? 503 : 200, body, keep_alive); co_return co_await std::move(op_); }
  }
  if (!authorized(s, req)) {
    *route = "unauthorized";
    ApiError e{401, "invalid_request_error",
               "Missing or incorrect API key: send 'Authorization: Bearer <key>' with the key given to 'dloop serve --api-key'.",
               "", "invalid_api_key"};
    { auto op_ = send_error(stream, req, e, keep_alive); co_return co_await std::move(op_); }
  }
  if (target == "/metrics") {
    *route = "/metrics";
    if (method != http::verb::get) { auto op_ = send_error(stream, req, method_not_allowed(req, "GET"), keep_alive); co_return co_await std::move(op_); }
    { auto op_ = send_text(stream, req, 200, s.metrics.prometheus_text(), "text/plain; version=0.0.4; charset=utf-8", keep_alive); co_return co_await std::move(op_); }
  }
  if (target == "/v1/models") {
    *route = "/v1/models";
    if (method != http::verb::get) { auto op_ = send_error(stream, req, method_not_allowed(req, "GET"), keep_alive); co_return co_await std::move(op_); }
    Json body = Json::object({{"object", "list"}, {"data", Json::array({model_json(s)})}});
    { auto op_ = send_json(stream, req, 200, body, keep_alive); co_return co_await std::move(op_); }
  }
  if (base::starts_with(target, "/v1/models/")) {
    *route = "/v1/models/{id}";
    if (method != http::verb::get) { auto op_ = send_error(stream, req, method_not_allowed(req, "GET"), keep_alive); co_return co_await std::move(op_); }
    const std::string id = target.substr(11);
    if (id != s.model_id) {
      ApiError e{404, "invalid_request_error",
                 "The model '" + id + "' does not exist (this server serves '" + s.model_id + "').", "model", "model_not_found"};
      { auto op_ = send_error(stream, req, e, keep_alive); co_return co_await std::move(op_); }
    }
    { auto op_ = send_json(stream, req, 200, model_json(s), keep_alive); co_return co_await std::move(op_); }
  }
  if (target == "/v1/chat/completions") {
    *route = "/v1/chat/completions";
    if (method != http::verb::post) { auto op_ = send_error(stream, req, method_not_allowed(req, "POST"), keep_alive); co_return co_await std::move(op_); }
    { auto op_ = handle_chat(s, stream, req, keep_alive); co_return co_await std::move(op_); }
  }
  if (target == "/v1/runs" || base::starts_with(target, "/v1/runs/")) {
    { auto op_ = handle_runs(s, stream, req, target.substr(8), query, keep_alive, route); co_return co_await std::move(op_); }
  }
  *route = "unknown";
  { auto op_ = send_error(stream, req, not_found_route(req), keep_alive); co_return co_await std::move(op_); }
}

ApiError read_error(const boost::system::error_code& ec) {
  if (ec == http::error::body_limit) {
    return ApiError{413, "invalid_request_error", "The request body is larger than the server's limit (--max-body-bytes).", "",
                    "request_too_large"};
  }
  if (ec == http::error::header_limit) {
    return ApiError{431, "invalid_request_error", "The request head is larger than the server's limit (--max-header-bytes).", "",
                    "request_header_fields_too_large"};
  }
  return ApiError{400, "invalid_request_error", "Malformed HTTP request: " + ec.message() + ".", "", "malformed_http"};
}

asio::awaitable<void> session(Server::Impl& s, tcp::socket socket) {
  boost::system::error_code peer_ec;
  const std::string peer = socket.remote_endpoint(peer_ec).address().to_string();
  Stream stream(std::move(socket));
  beast::flat_buffer buffer;
  ++s.connections;
  const int from_peer = ++s.connections_per_ip[peer];
  struct Guard {
    Server::Impl& s;
    const std::string& peer;
    ~Guard() {
      --s.connections;
      if (--s.connections_per_ip[peer] <= 0) s.connections_per_ip.erase(peer);
    }
  } guard{s, peer};
  if (s.connections > s.opt.max_connections || from_peer > s.opt.max_connections_per_ip) {
    const bool global = s.connections > s.opt.max_connections;
    s.metrics.add_rejected(global ? "connections" : "connections_per_ip");
    Request dummy;
    ApiError e{503, "server_error",
               global ? "Too many open connections; retry later."
                      : "Too many open connections from your address (--max-connections-per-ip); retry later.",
               "", global ? "too_many_connections" : "too_many_connections_from_client"};
    auto op = send_error(stream, dummy, e, false);
    co_await std::move(op);
    co_return;
  }
  bool first = true;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(s.opt.max_header_bytes));
    parser.body_limit(s.opt.max_body_bytes);
    // The head of a new connection's first request must arrive soon (slow clients cannot hold
    // slots for long); a kept-alive connection may idle longer; the body then has read_timeout.
    stream.expires_after(first ? s.opt.header_timeout : s.opt.idle_timeout);
    first = false;
    auto op = http::async_read_header(stream, buffer, parser, kTuple);
    auto [ec, n] = co_await std::move(op);
    (void)n;
    if (!ec && !parser.is_done()) {
      stream.expires_after(s.opt.read_timeout);
      auto body_op = http::async_read(stream, buffer, parser, kTuple);
      auto [body_ec, body_n] = co_await std::move(body_op);
      (void)body_n;
      ec = body_ec;
    }
    if (ec) {
      const bool quiet = ec == http::error::end_of_stream || ec == asio::error::eof || ec == beast::error::timeout ||
                         ec == asio::error::connection_reset || ec == asio::error::operation_aborted || !parser.got_some();
      if (!quiet) {
        const auto t0 = std::chrono::steady_clock::now();
        const ApiError e = read_error(ec);
        Request dummy;
        auto w = send_error(stream, dummy, e, false);
        const int status = co_await std::move(w);
        s.metrics.observe_request("malformed", status < 0 ? e.status : status,
                                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      break;
    }
    stream.expires_never();
    Request req = parser.release();
    const bool keep_alive = req.keep_alive() && !s.stopping;
    const auto t0 = std::chrono::steady_clock::now();
    std::string route = "unknown";
    int status = -1;
    if (auto refused = check_host_and_origin(s, req)) {
      // Written against a blank request: no CORS fields for an origin that is not allowed.
      s.metrics.add_rejected(refused->code.c_str());
      Request blank;
      blank.version(req.version());
      auto w = send_error(stream, blank, *refused, false);
      status = co_await std::move(w);
      s.metrics.observe_request("refused", status < 0 ? refused->status : status,
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      break;
    }
    try {
      auto d = dispatch(s, stream, req, keep_alive, &route);
      status = co_await std::move(d);
    } catch (const std::exception& e) {
      DLOOP_ERROR("serve: ", std::string(req.method_string()), " ", std::string(req.target()), " failed: ", e.what());
      status = -1;
    }
    s.metrics.observe_request(route, status < 0 ? 499 : status,
                              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (status < 0 || !keep_alive || s.stopping) break;
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> accept_loop(Server::Impl& s) {
  for (;;) {
    auto op = s.acceptor.async_accept(kTuple);
    auto [ec, socket] = co_await std::move(op);
    if (ec) {
      if (ec == asio::error::operation_aborted || !s.acceptor.is_open()) co_return;
      continue;  // e.g. EMFILE: keep serving the connections we have
    }
    asio::co_spawn(s.ioc, session(s, std::move(socket)), asio::detached);
  }
}

// Waits until completions, streams and runs are done (or the grace period passes), then stops.
asio::awaitable<void> drain(Server::Impl& s) {
  const auto deadline = std::chrono::steady_clock::now() + s.opt.shutdown_grace;
  asio::steady_timer timer(s.ioc);
  while (std::chrono::steady_clock::now() < deadline &&
         (s.metrics.active_generations() > 0 || !s.runs.empty() || s.streams > 0)) {
    timer.expires_after(std::chrono::milliseconds(50));
    auto op = timer.async_wait(kTuple);
    co_await std::move(op);
  }
  s.ioc.stop();
}

}  // namespace

void Server::Impl::begin_shutdown() {
  if (stopping) return;
  stopping = true;
  DLOOP_INFO("serve: shutting down: ", metrics.active_generations(), " generation(s), ", runs.size(), " run(s) in flight");
  boost::system::error_code ignored;
  acceptor.close(ignored);
  if (signals) signals->cancel(ignored);
  for (auto& [id, slot] : runs) {
    slot.cancelled->store(true);
    slot.signal->emit(asio::cancellation_type::terminal);
  }
  asio::co_spawn(ioc, drain(*this), asio::detached);
}

// ---- Server ----------------------------------------------------------------------------------

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  impl_->ioc.stop();
  impl_->engine_thread.join();
  impl_->db.join();
  impl_->blocking.join();
}

uint16_t Server::port() const { return impl_->port; }
const std::string& Server::model_id() const { return impl_->model_id; }

void Server::stop() {
  Impl* s = impl_.get();
  asio::post(s->ioc, [s] { s->begin_shutdown(); });
}

int Server::run() {
  Impl& s = *impl_;
  if (s.opt.handle_signals) {
    s.signals = std::make_unique<asio::signal_set>(s.ioc, SIGINT, SIGTERM);
    s.signals->async_wait([&s](const boost::system::error_code& ec, int) {
      if (!ec) s.begin_shutdown();
    });
  }
  asio::co_spawn(s.ioc, accept_loop(s), asio::detached);
  s.ioc.run();
  return 0;
}

base::Result<std::unique_ptr<Server>> Server::start(ServerOptions options) {
  if (!is_loopback_host(options.host) && options.api_key.empty()) {
    return base::invalid_argument("--host " + options.host +
                                  " is not a loopback address: serving it needs --api-key KEY (or DLOOP_API_KEY)");
  }
  if (options.max_generations < 1) return base::invalid_argument("--max-concurrent must be >= 1");
  auto impl = std::make_unique<Impl>();
  impl->opt = std::move(options);
  const ServerOptions& o = impl->opt;
  std::filesystem::path mp(o.model_path);
  impl->model_id = o.model_id.empty() ? mp.stem().string() : o.model_id;
  impl->model_created = static_cast<int64_t>(std::time(nullptr));
  engine::EngineOptions eo;
  eo.model_path = o.model_path;
  eo.threads = o.engine_threads;
  eo.device = o.device;
  auto opened = engine::Engine::open(eo);
  if (!opened.ok()) return opened.status();
  impl->engine = std::shared_ptr<engine::Engine>(std::move(opened).value());
  std::shared_ptr<engine::Engine> eng = impl->engine;
  impl->bridge = std::make_shared<runtime::EngineBridge>(
      [eng](const engine::ToolCallRequest& r) { return eng->tool_call(r); });
  auto store = memory::Store::open(o.db_path);
  if (!store.ok()) return store.status().with_context(o.db_path);
  impl->store = std::shared_ptr<memory::Store>(std::move(store).value());

  boost::system::error_code ec;
  const std::string host = o.host == "localhost" ? "127.0.0.1" : o.host;
  auto addr = asio::ip::make_address(host, ec);
  if (ec) return base::invalid_argument("--host '" + o.host + "' is not an IP address");
  tcp::endpoint ep(addr, o.port);
  impl->acceptor.open(ep.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(ep, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return base::io_error("cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " + ec.message());
  impl->port = impl->acceptor.local_endpoint().port();
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

}  // namespace dloop::server
