// Replays the HTTP request fuzz entry (http_fuzz.cpp) in every build: a seed corpus of requests
// (valid chat completions with tools, streams and schemas, and broken ones) plus deterministic
// mutations of each (byte flips, truncation, duplication, insertion of JSON and HTTP syntax).
// Nothing may crash or hang, and the mutations must reach every level (HTTP rejected, JSON
// rejected, a field rejected, accepted). Label: fuzz.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "http_fuzz.h"

namespace dloop::fuzz {
namespace {

std::string http_post(const std::string& body) {
  return std::string("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ")
      .append(std::to_string(body.size()))
      .append("\r\n\r\n")
      .append(body);
}

std::vector<std::string> seeds() {
  const char* bodies[] = {
      R"({"model":"m","messages":[{"role":"user","content":"hi"}]})",
      R"({"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"}]}],"stream":true,"stream_options":{"include_usage":true},"diffusing":true})",
      R"({"model":"m","messages":[{"role":"user","content":"w"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"c1","content":"{}"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"integer"}}}}}],"tool_choice":"auto"})",
      R"({"model":"m","messages":[{"role":"user","content":"j"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","strict":true,"schema":{"type":"object","properties":{"k":{"enum":["a","b"]}},"required":["k"]}}},"temperature":0.5,"seed":3,"max_completion_tokens":64,"stop":["\n"]})",
      R"({"model":"m","messages":[{"role":"user","content":"x"}],"temperature":"hot"})",
  };
  std::vector<std::string> out;
  for (const char* b : bodies) out.push_back(http_post(b));
  out.push_back("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  out.push_back("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\n\r\n");
  return out;
}

uint64_t next(uint64_t& s) {
  s += 0x9E3779B97F4A7C15ull;
  uint64_t z = s;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void mutate(std::string& b, uint64_t& rng) {
  static const std::array<std::string, 14> kTokens = {"{", "}", "[", "]", "\"", ",", ":", "null", "-1e999",
                                                      "\\u0000", "\xff", "\r\n", "Content-Length: 99999999\r\n", "\"role\""};
  if (b.empty()) { b = "{"; return; }
  const size_t at = next(rng) % b.size();
  switch (next(rng) % 6) {
    case 0: b[at] = static_cast<char>(next(rng)); break;
    case 1: b.resize(at); break;
    case 2: b.insert(at, kTokens[next(rng) % kTokens.size()]); break;
    case 3: b.erase(at, 1 + next(rng) % 8); break;
    case 4: b.insert(at, b.substr(at, std::min<size_t>(b.size() - at, 1 + next(rng) % 32))); break;
    default: b[at] = static_cast<char>(b[at] ^ (1 << (next(rng) % 8))); break;
  }
}

TEST(HttpFuzzReplay, SeedsAndMutationsReachEveryLevel) {
  std::array<int, 4> levels{};
  for (const std::string& s : seeds()) {
    ++levels[static_cast<int>(fuzz_http_request(reinterpret_cast<const uint8_t*>(s.data()), s.size()))];
  }
  EXPECT_GT(levels[static_cast<int>(HttpFuzzLevel::kAccepted)], 0);
  uint64_t rng = 12345;
  for (const std::string& s : seeds()) {
    for (int i = 0; i < 1500; ++i) {
      std::string m = s;
      const int n = 1 + static_cast<int>(next(rng) % 4);
      for (int k = 0; k < n; ++k) mutate(m, rng);
      ++levels[static_cast<int>(fuzz_http_request(reinterpret_cast<const uint8_t*>(m.data()), m.size()))];
    }
  }
  for (int l = 0; l < 4; ++l) EXPECT_GT(levels[l], 0) << "level " << l << " never reached";
  std::printf("http fuzz replay: http rejected %d, json rejected %d, field rejected %d, accepted %d\n", levels[0],
              levels[1], levels[2], levels[3]);
}

}  // namespace
}  // namespace dloop::fuzz
