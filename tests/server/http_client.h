// Test helper: a small blocking HTTP/1.1 client on Boost.Beast for the server tests and the load
// client. One Client keeps one connection alive and reconnects when the server closed it. Raw
// mode sends arbitrary bytes (malformed requests). Not thread-safe: one Client per thread.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dloop::test {

struct HttpReply {
  int status = 0;  // 0: the connection failed
  std::string body;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string header(const std::string& name) const {
    for (const auto& [k, v] : headers) {
      if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
    }
    return "";
  }
};

class HttpClient {
 public:
  HttpClient(std::string host, uint16_t port) : host_(std::move(host)), port_(port) {}

  HttpReply request(const std::string& method, const std::string& target, const std::string& body = "",
                    const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!connected_ && !connect()) return {};
      namespace http = boost::beast::http;
      http::request<http::string_body> req{http::string_to_verb(method), target, 11};
      req.set(http::field::host, host_);
      if (!body.empty()) req.set(http::field::content_type, "application/json");
      for (const auto& [k, v] : headers) req.set(k, v);
      req.body() = body;
      req.prepare_payload();
      boost::system::error_code ec;
      http::write(socket_, req, ec);
      if (ec) { reset(); continue; }
      http::response_parser<http::string_body> parser;
      parser.body_limit(64 << 20);
      http::read(socket_, buffer_, parser, ec);
      if (ec) { reset(); if (attempt == 0) continue; return {}; }
      auto res = parser.release();
      HttpReply out;
      out.status = static_cast<int>(res.result_int());
      out.body = res.body();
      for (const auto& f : res) out.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
      out.content_type = out.header("Content-Type");
      if (!res.keep_alive()) reset();
      return out;
    }
    return {};
  }

  // Sends bytes as they are and reads one response (or returns status 0 when the server closed).
  HttpReply raw(const std::string& bytes) {
    reset();
    if (!connect()) return {};
    boost::system::error_code ec;
    boost::asio::write(socket_, boost::asio::buffer(bytes), ec);
    namespace http = boost::beast::http;
    http::response_parser<http::string_body> parser;
    http::read(socket_, buffer_, parser, ec);
    HttpReply out;
    if (ec && !parser.is_header_done()) { reset(); return out; }
    auto res = parser.release();
    out.status = static_cast<int>(res.result_int());
    out.body = res.body();
    reset();
    return out;
  }

 private:
  bool connect() {
    boost::system::error_code ec;
    socket_ = boost::asio::ip::tcp::socket(ioc_);
    socket_.connect({boost::asio::ip::make_address(host_), port_}, ec);
    connected_ = !ec;
    buffer_.clear();
    return connected_;
  }
  void reset() {
    boost::system::error_code ec;
    socket_.close(ec);
    connected_ = false;
    buffer_.clear();
  }

  std::string host_;
  uint16_t port_;
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::socket socket_{ioc_};
  boost::beast::flat_buffer buffer_;
  bool connected_ = false;
};

}  // namespace dloop::test
