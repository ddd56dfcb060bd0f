// The cross-site and abuse guards of `dloop serve` (docs/server.md "Threat model"), each against a
// real server on 127.0.0.1 port 0 through a real Beast client: JSON-only bodies (415), the Origin
// check (403) and CORS answers for an allowed origin, the Host check against DNS rebinding (421),
// command tools only with an API key, workflow files confined to --workflows DIR, the size bound
// of workflow_yaml (413) parsed off the event loop, secret env values redacted in what the runs
// API sends, the per-address connection cap, the short header timeout and a case-insensitive
// bearer scheme.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "dloop/base/json.h"
#include "dloop/server/server.h"
#include "http_client.h"
#include "server_fixture.h"

namespace dloop::server {
namespace {

// A calculator workflow (no command tools), as the escaped text of a JSON string.
const std::string kAddYaml =
    "name: add\\ninputs: {a: {type: number, required: true}}\\ntools: [{use: calculator}]\\n"
    "steps:\\n  - id: sum\\n    tool: calculator\\n    args: {expression: \\\"${{ inputs.a }} + 1\\\"}\\n"
    "outputs: {result: \\\"${{ steps.sum.output.result }}\\\"}\\n";
const std::string kAddBody = R"({"workflow_yaml":")" + kAddYaml + R"(","inputs":{"a":1}})";

const std::string kShellBody =
    R"({"workflow_yaml":"name: sh\ntools:\n  - use: shell\n    with: {allow: [echo]}\nsteps:\n  - id: hi\n    tool: shell\n    args: {argv: [echo, hi]}\n"})";

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << text;
}

TEST(ServerGuards, JsonEndpointsAcceptOnlyJsonBodies) {
  ServerFixture f(test_options("ctype"));
  ASSERT_TRUE(f.ok());
  test::HttpClient c("127.0.0.1", f.port());
  // The "simple request" a cross-site page can send without a preflight.
  expect_error(c.request("POST", "/v1/runs", kAddBody, {{"Content-Type", "text/plain"}}), 415, "unsupported_media_type");
  expect_error(c.request("POST", "/v1/runs", kAddBody, {{"Content-Type", "application/x-www-form-urlencoded"}}), 415,
               "unsupported_media_type");
  expect_error(c.request("POST", "/v1/chat/completions", R"({"model":"tiny"})", {{"Content-Type", "text/plain"}}), 415,
               "unsupported_media_type");
  auto ok = c.request("POST", "/v1/runs", kAddBody, {{"Content-Type", "Application/JSON; charset=utf-8"}});
  EXPECT_EQ(ok.status, 201) << ok.body;
}

TEST(ServerGuards, ForeignOriginsAreRefusedAndAllowedOnesGetCors) {
  ServerOptions o = test_options("origin");
  o.allowed_origins = {"http://localhost:3000"};
  ServerFixture f(o);
  ASSERT_TRUE(f.ok());
  test::HttpClient c("127.0.0.1", f.port());
  auto refused = c.request("POST", "/v1/runs", kAddBody, {{"Origin", "https://evil.example"}});
  expect_error(refused, 403, "origin_not_allowed");
  EXPECT_EQ(refused.header("Access-Control-Allow-Origin"), "");
  expect_error(c.request("GET", "/v1/runs", "", {{"Origin", "null"}}), 403, "origin_not_allowed");
  expect_error(c.request("OPTIONS", "/v1/runs", "", {{"Origin", "https://evil.example"}}), 403, "origin_not_allowed");

  auto allowed = c.request("POST", "/v1/runs", kAddBody, {{"Origin", "http://localhost:3000"}});
  EXPECT_EQ(allowed.status, 201) << allowed.body;
  EXPECT_EQ(allowed.header("Access-Control-Allow-Origin"), "http://localhost:3000");
  auto preflight = c.request("OPTIONS", "/v1/runs", "", {{"Origin", "http://localhost:3000"}});
  EXPECT_EQ(preflight.status, 204);
  EXPECT_NE(preflight.header("Access-Control-Allow-Headers").find("Content-Type"), std::string::npos);
  // Clients that send no Origin (curl, SDKs) are unaffected.
  EXPECT_EQ(c.request("GET", "/v1/runs").status, 200);
}

TEST(ServerGuards, HostHeaderMustNameThisServer) {
  ServerOptions o = test_options("host");
  o.allowed_hosts = {"dloop.internal"};
  ServerFixture f(o);
  ASSERT_TRUE(f.ok());
  const std::string port = std::to_string(f.port());
  test::HttpClient c("127.0.0.1", f.port());
  // DNS rebinding: the page's own name now resolves to 127.0.0.1.
  expect_error(c.request("GET", "/v1/runs", "", {{"Host", "evil.example:" + port}}), 421, "host_not_allowed");
  expect_error(c.request("POST", "/v1/runs", kAddBody, {{"Host", "evil.example"}}), 421, "host_not_allowed");
  expect_error(c.request("GET", "/healthz", "", {{"Host", "localhost:1"}}), 421, "host_not_allowed");
  for (const std::string& host : std::vector<std::string>{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "LOCALHOST", "dloop.internal",
                                 "dloop.internal:443"}) {
    EXPECT_EQ(c.request("GET", "/healthz", "", {{"Host", host}}).status, 200) << host;
  }
}

TEST(ServerHelpers, HostHeaderRules) {
  ServerOptions o;
  o.host = "0.0.0.0";
  EXPECT_TRUE(host_header_allowed("10.1.2.3:8080", o, 8080));  // a wildcard bind: any IP literal
  EXPECT_FALSE(host_header_allowed("rebind.example:8080", o, 8080));
  EXPECT_FALSE(host_header_allowed("127.0.0.1:8081", o, 8080));
  EXPECT_FALSE(host_header_allowed("127.0.0.1:", o, 8080));
  EXPECT_FALSE(host_header_allowed("::1", o, 8080));  // IPv6 needs brackets in Host
  EXPECT_TRUE(host_header_allowed("localhost.:8080", o, 8080));
  o.host = "192.168.1.5";
  EXPECT_TRUE(host_header_allowed("192.168.1.5:8080", o, 8080));
  EXPECT_FALSE(host_header_allowed("192.168.1.6:8080", o, 8080));
}

TEST(ServerGuards, CommandToolsNeedTheApiKey) {
  {
    ServerFixture f(test_options("cmd_nokey"));
    ASSERT_TRUE(f.ok());
    test::HttpClient c("127.0.0.1", f.port());
    expect_error(c.request("POST", "/v1/runs", kShellBody), 403, "command_tools_need_api_key");
    EXPECT_EQ(c.request("POST", "/v1/runs", kAddBody).status, 201);  // no command tools: served
  }
  ServerOptions o = test_options("cmd_key");
  o.api_key = "k-9";
  ServerFixture f(o);
  ASSERT_TRUE(f.ok());
  test::HttpClient c("127.0.0.1", f.port());
  expect_error(c.request("POST", "/v1/runs", kShellBody), 401, "invalid_api_key");
  // The scheme is case-insensitive (RFC 9110 11.1).
  for (const char* scheme : {"Bearer", "bearer", "BEARER"}) {
    auto r = c.request("POST", "/v1/runs", kShellBody, {{"Authorization", std::string(scheme) + " k-9"}});
    EXPECT_EQ(r.status, 201) << scheme << ": " << r.body;
  }
  expect_error(c.request("GET", "/v1/runs", "", {{"Authorization", "Basic k-9"}}), 401, "invalid_api_key");
}

// {"workflow": PATH} names a file under --workflows and nothing else; the refusals never show
// what an outside file holds.
TEST(ServerGuards, WorkflowPathsStayInsideTheWorkflowsDir) {
  ServerOptions o = test_options("wfdir");
  const fs::path base = o.workspace;
  const fs::path flows = base / "flows";
  const fs::path outside = base / "outside";
  fs::create_directories(flows / "sub");
  fs::create_directories(outside);
  write_file(outside / "secret.yaml", "topsecret_key: topsecret-value\n");
  write_file(flows / "sub" / "ok.yaml", "name: add\ninputs: {a: {type: number, required: true}}\ntools: [{use: calculator}]\n"
                                        "steps:\n  - id: sum\n    tool: calculator\n    args: {expression: \"1 + 1\"}\n");
  fs::create_symlink(outside / "secret.yaml", flows / "link.yaml");
  fs::create_directory_symlink(outside, flows / "out");
  o.workflows_dir = flows;
  ServerFixture f(o);
  ASSERT_TRUE(f.ok());
  test::HttpClient c("127.0.0.1", f.port());
  auto ask = [&](const std::string& path) {
    return c.request("POST", "/v1/runs", Json::object({{"workflow", path}, {"inputs", Json::object({{"a", 1}})}}).dump());
  };
  for (const std::string& bad : std::vector<std::string>{"../outside/secret.yaml", (outside / "secret.yaml").string(), "sub/../../outside/secret.yaml",
                                "link.yaml", "out/secret.yaml", "/etc/passwd", "../../../../etc/passwd", "sub"}) {
    auto r = ask(bad);
    EXPECT_TRUE(r.status == 400 || r.status == 403) << bad << ": " << r.body;
    EXPECT_EQ(r.body.find("topsecret"), std::string::npos) << bad << ": " << r.body;
    EXPECT_EQ(r.body.find("root:"), std::string::npos) << bad << ": " << r.body;
    EXPECT_NE(r.body.find("invalid_workflow_path"), std::string::npos) << bad << ": " << r.body;
  }
  expect_error(ask("nope.yaml"), 400, "workflow_not_found");
  auto ok = ask("sub/ok.yaml");
  ASSERT_EQ(ok.status, 201) << ok.body;
  auto got = c.request("GET", "/v1/runs/" + body_json(ok).find("id")->as_string());
  EXPECT_NE(got.body.find((fs::canonical(flows) / "sub" / "ok.yaml").string()), std::string::npos) << got.body;

  // Without --workflows, no path is read at all, with a message that says how to allow them.
  ServerOptions none = test_options("wfnone");
  none.workflows_dir.clear();
  ServerFixture g(none);
  ASSERT_TRUE(g.ok());
  test::HttpClient d("127.0.0.1", g.port());
  auto r = d.request("POST", "/v1/runs", R"({"workflow":"flow.yaml"})");
  expect_error(r, 403, "workflow_paths_disabled");
  EXPECT_NE(r.body.find("--workflows"), std::string::npos) << r.body;
}

// A workflow_yaml past --max-workflow-bytes gets 413 before it is parsed; one under it is parsed
// off the event loop, so requests on other connections are answered while it parses.
TEST(ServerGuards, LargeWorkflowYamlIsBoundedAndParsedOffTheLoop) {
  ServerOptions o = test_options("bigwf");
  o.max_body_bytes = 8 << 20;
  o.max_workflow_bytes = 64 << 10;
  {
    ServerFixture f(o);
    ASSERT_TRUE(f.ok());
    test::HttpClient c("127.0.0.1", f.port());
    std::string pad;
    for (int i = 0; pad.size() < (80u << 10); ++i) pad += "# comment line " + std::to_string(i) + "\\n";
    expect_error(c.request("POST", "/v1/runs", R"({"workflow_yaml":")" + pad + kAddYaml + R"(","inputs":{"a":1}})"), 413,
                 "workflow_too_large");
    EXPECT_EQ(c.request("GET", "/healthz").status, 200);
  }
  // A 3 MiB workflow (allowed here) keeps a parser busy for a while; /healthz on another
  // connection is answered before that parse ends.
  o.max_workflow_bytes = 6 << 20;
  ServerFixture f(o);
  ASSERT_TRUE(f.ok());
  std::string big = "name: big\\nsteps:\\n  - id: s\\n    set:\\n      v:\\n";
  for (int i = 0; big.size() < (3u << 20); ++i) big += "        - a-long-scalar-for-the-parser-to-read-" + std::to_string(i) + "\\n";
  std::atomic<bool> done{false};
  test::HttpReply parsed;
  std::thread t([&] {
    test::HttpClient a("127.0.0.1", f.port());
    parsed = a.request("POST", "/v1/runs", R"({"workflow_yaml":")" + big + R"("})");
    done = true;
  });
  test::HttpClient c("127.0.0.1", f.port());
  int answered_meanwhile = 0;
  while (!done) {
    if (c.request("GET", "/healthz").status == 200 && !done) ++answered_meanwhile;
  }
  t.join();
  EXPECT_EQ(parsed.status, 201) << parsed.body.substr(0, 300);
  EXPECT_GT(answered_meanwhile, 0);
}

TEST(ServerGuards, SecretEnvValuesAreRedactedInTheRunsApi) {
  ::setenv("DLOOP_TEST_SRV_TOKEN", "hunter2-in-server", 1);
  ServerFixture f(test_options("secrets"));
  ASSERT_TRUE(f.ok());
  test::HttpClient c("127.0.0.1", f.port());
  auto created = c.request("POST", "/v1/runs",
                           R"({"workflow_yaml":"name: sec\nenv: [{name: DLOOP_TEST_SRV_TOKEN, secret: true}]\nsteps:\n)"
                           R"(  - id: greet\n    set: {line: \"token=${{ env.DLOOP_TEST_SRV_TOKEN }}\"}\n)"
                           R"(outputs: {line: \"${{ steps.greet.output.line }}\"}\n"})");
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string id = body_json(created).find("id")->as_string();
  auto events = c.request("GET", "/v1/runs/" + id + "/events");
  ASSERT_EQ(events.status, 200);
  EXPECT_NE(events.body.find("event: run_completed"), std::string::npos) << events.body;
  EXPECT_EQ(events.body.find("hunter2-in-server"), std::string::npos) << events.body;
  EXPECT_NE(events.body.find("[REDACTED:DLOOP_TEST_SRV_TOKEN]"), std::string::npos) << events.body;
  auto run = c.request("GET", "/v1/runs/" + id);
  EXPECT_EQ(run.body.find("hunter2-in-server"), std::string::npos) << run.body;
  EXPECT_NE(run.body.find("token=[REDACTED:DLOOP_TEST_SRV_TOKEN]"), std::string::npos) << run.body;
  EXPECT_EQ(c.request("GET", "/v1/runs").body.find("hunter2-in-server"), std::string::npos);
  ::unsetenv("DLOOP_TEST_SRV_TOKEN");
}

// Slow-loris: connections from one address past the cap are turned away at once, and a
// connection that never finishes its request head is closed after the header timeout (1 s
// here, while the read timeout stays 30 s), so held slots come back.
TEST(ServerGuards, PerAddressCapAndHeaderTimeout) {
  ServerOptions o = test_options("loris");
  o.max_connections_per_ip = 3;
  o.header_timeout = std::chrono::seconds(1);
  o.read_timeout = std::chrono::seconds(30);
  ServerFixture f(o);
  ASSERT_TRUE(f.ok());
  namespace asio = boost::asio;
  asio::io_context ioc;
  const asio::ip::tcp::endpoint at(asio::ip::make_address("127.0.0.1"), f.port());
  std::vector<asio::ip::tcp::socket> slow;
  for (int i = 0; i < 3; ++i) {
    slow.emplace_back(ioc);
    slow.back().connect(at);
    asio::write(slow.back(), asio::buffer(std::string("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")));
  }
  test::HttpClient c("127.0.0.1", f.port());
  auto turned_away = c.request("GET", "/healthz");
  expect_error(turned_away, 503, "too_many_connections_from_client");
  // The slow heads are cut off at the header timeout: each read ends (EOF or a 408 answer).
  for (auto& s : slow) {
    char buf[512];
    boost::system::error_code ec;
    s.read_some(asio::buffer(buf), ec);  // returns once the server closes or answers
    s.close();
  }
  auto served = c.request("GET", "/healthz");
  for (int i = 0; i < 100 && served.status != 200; ++i) {  // the server may still be releasing slots
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    served = c.request("GET", "/healthz");
  }
  EXPECT_EQ(served.status, 200) << served.body;
}

}  // namespace
}  // namespace dloop::server
