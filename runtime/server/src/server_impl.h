// Server::Impl and the helpers its route handlers share: the reply writers (plain JSON bodies,
// OpenAI-shaped errors, chunked SSE streams) and the per-run bookkeeping. Private to
// runtime/server. Everything here runs on the io_context thread unless a comment says otherwise.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "dloop/base/json.h"
#include "dloop/engine/engine.h"
#include "dloop/memory/store.h"
#include "dloop/runtime/engine_bridge.h"
#include "dloop/server/api_error.h"
#include "dloop/server/metrics.h"
#include "dloop/server/server.h"

namespace dloop::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Request = http::request<http::string_body>;
using Stream = beast::tcp_stream;

constexpr std::chrono::seconds kWriteTimeout{30};

struct RunSlot {
  std::shared_ptr<std::atomic<bool>> cancelled;
  std::shared_ptr<asio::cancellation_signal> signal;
};

struct Server::Impl {
  // Members are destroyed in reverse order: the loop goes after the thread pools (as Asio wants)
  // but before the bookkeeping above it, which coroutines still suspended on the loop touch as
  // they are destroyed.
  ServerOptions opt;
  std::string model_id;
  int64_t model_created = 0;
  Metrics metrics;
  bool stopping = false;
  int connections = 0;
  std::map<std::string, int> connections_per_ip;  // open connections by client address
  int streams = 0;                     // open SSE answers
  uint16_t port = 0;                   // the bound port (the acceptor closes at shutdown)
  std::map<std::string, RunSlot> runs; // runs executing in this process, by id
  asio::io_context ioc{1};
  asio::thread_pool engine_thread{1};  // chat completions (the runs' bridge has its own thread)
  asio::thread_pool db{1};             // Store calls of the runs API and of the runs
  asio::thread_pool blocking{4};       // tools' blocking work in runs
  std::shared_ptr<engine::Engine> engine;
  std::shared_ptr<runtime::EngineBridge> bridge;
  std::shared_ptr<memory::Store> store;
  tcp::acceptor acceptor{ioc};
  std::unique_ptr<asio::signal_set> signals;

  void begin_shutdown();
};

// Writes a complete answer; returns its status, or -1 when the connection broke. Coroutine
// parameters are taken by value: a reference to a caller's temporary would dangle once suspended.
asio::awaitable<int> send_json(Stream& stream, const Request& req, int status, base::Json body, bool keep_alive,
                               std::vector<std::pair<std::string, std::string>> headers = {});
asio::awaitable<int> send_error(Stream& stream, const Request& req, ApiError error, bool keep_alive);
asio::awaitable<int> send_text(Stream& stream, const Request& req, int status, std::string body,
                               std::string content_type, bool keep_alive);

// A chunked text/event-stream answer: start() writes the head, event() one SSE event (an optional
// `event:` name and `id:`, then `data:`), finish() the last chunk. Each returns false once the
// client has gone.
class SseWriter {
 public:
  SseWriter(Stream& stream, const Request& req) : stream_(stream), req_(req) {}
  asio::awaitable<bool> start();
  asio::awaitable<bool> event(std::string data, std::string name = "", std::string id = "");
  asio::awaitable<bool> raw(std::string text);
  asio::awaitable<bool> finish();

 private:
  Stream& stream_;
  const Request& req_;
};

// Route handlers. Each writes its answer and returns the status (-1: the connection broke).
asio::awaitable<int> handle_chat(Server::Impl& s, Stream& stream, const Request& req, bool keep_alive);
// `rest` is the path after "/v1/runs"; *route is set to the route pattern for metrics.
asio::awaitable<int> handle_runs(Server::Impl& s, Stream& stream, const Request& req, std::string rest,
                                 std::string query, bool keep_alive, std::string* route);

}  // namespace dloop::server
