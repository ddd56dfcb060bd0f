// fuzz_http_request(): see http_fuzz.h.
#include "http_fuzz.h"

#include <cstdlib>
#include <string_view>

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "dloop/base/json.h"
#include "dloop/server/chat_request.h"

namespace dloop::fuzz {

namespace http = boost::beast::http;

HttpFuzzLevel fuzz_http_request(const uint8_t* data, size_t size) {
  http::request_parser<http::string_body> parser;
  parser.header_limit(16 << 10);
  parser.body_limit(1 << 20);
  parser.eager(true);
  boost::system::error_code ec;
  size_t used = 0;
  while (!parser.is_done()) {
    if (used == size) {
      parser.put_eof(ec);
      break;
    }
    const size_t n = parser.put(boost::asio::buffer(data + used, size - used), ec);
    used += n;
    if (ec == http::error::need_more) {
      ec = {};
      if (n == 0) {
        parser.put_eof(ec);  // the rest cannot complete the message: the peer closed here
        break;
      }
      continue;
    }
    if (ec) return HttpFuzzLevel::kHttpRejected;
  }
  if (ec || !parser.is_done()) return HttpFuzzLevel::kHttpRejected;
  const std::string& body = parser.get().body();
  auto r = server::parse_chat_request(body);
  if (auto* e = std::get_if<server::ApiError>(&r)) {
    // Every rejection is a 400 whose body is valid JSON in the OpenAI error shape.
    if (e->status != 400 || e->message.empty()) std::abort();
    auto back = base::Json::parse(e->to_json().dump());
    if (!back.ok() || back->find("error") == nullptr) std::abort();
    return e->code == "invalid_json" ? HttpFuzzLevel::kJsonRejected : HttpFuzzLevel::kFieldRejected;
  }
  const auto& req = std::get<server::ChatRequest>(r);
  if (req.messages.empty()) std::abort();
  return HttpFuzzLevel::kAccepted;
}

}  // namespace dloop::fuzz
