// The server in process on a free loopback port, driven over real sockets: health, models,
// metrics, authentication, limits (413, 431), malformed HTTP and JSON (the server keeps serving),
// a chat completion and a stream on a tiny test model (shapes only: the model is random), and
// the runs API with a workflow that needs no model (start, read, SSE events, cancel, errors).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "dloop/base/json.h"
#include "dloop/memory/store.h"
#include "dloop/server/server.h"
#include "http_client.h"
#include "server_fixture.h"

namespace dloop::server {
namespace {

using base::Json;
namespace fs = std::filesystem;

TEST(ServerHelpers, LoopbackAndKeys) {
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("127.1.2.3"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_TRUE(is_loopback_host("localhost"));
  EXPECT_FALSE(is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(is_loopback_host("10.0.0.1"));
  EXPECT_FALSE(is_loopback_host("example.com"));
  EXPECT_TRUE(api_key_matches("s3cret", "s3cret"));
  EXPECT_FALSE(api_key_matches("s3cres", "s3cret"));
  EXPECT_FALSE(api_key_matches("s3cre", "s3cret"));
  EXPECT_FALSE(api_key_matches("s3cret!", "s3cret"));
  EXPECT_FALSE(api_key_matches("", "s3cret"));
}

TEST(ServerStart, NonLoopbackNeedsAnApiKey) {
  ServerOptions o = test_options("nokey");
  o.host = "0.0.0.0";
  auto s = Server::start(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), base::Code::kInvalidArgument);
  EXPECT_NE(s.status().message().find("--api-key"), std::string::npos);
}

TEST(ServerStart, MissingModelNamesTheFile) {
  ServerOptions o = test_options("nomodel");
  o.model_path = "/nonexistent/model.gguf";
  auto s = Server::start(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("/nonexistent/model.gguf"), std::string::npos);
}

TEST(ServerHttp, HealthModelsMetricsAndErrors) {
  ServerFixture f(test_options("basic"));
  ASSERT_TRUE(f.ok());
  test::HttpClient c("127.0.0.1", f.port());

  auto h = c.request("GET", "/healthz");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(body_json(h).find("status")->as_string(), "ok");

  auto m = c.request("GET", "/v1/models");
  EXPECT_EQ(m.status, 200);
  Json models = body_json(m);
  EXPECT_EQ(models.find("object")->as_string(), "list");
  ASSERT_EQ(models.find("data")->size(), 1u);
  const Json& model = models.find("data")->as_array()[0];
  EXPECT_EQ(model.find("id")->as_string(), "tiny");
  EXPECT_EQ(model.find("object")->as_string(), "model");
  EXPECT_TRUE(model.find("created")->is_int());
  EXPECT_EQ(model.find("owned_by")->as_string(), "dloop");
  EXPECT_EQ(c.request("GET", "/v1/models/tiny").status, 200);
  expect_error(c.request("GET", "/v1/models/gpt-4o"), 404, "model_not_found");

  expect_error(c.request("GET", "/v1/nothing"), 404, "unknown_url");
  expect_error(c.request("GET", "/v1/chat/completions"), 405, "method_not_allowed");
  expect_error(c.request("POST", "/v1/chat/completions", "{\"model\":"), 400, "invalid_json");
  expect_error(c.request("POST", "/v1/chat/completions", R"({"model":"gpt-4o","messages":[{"role":"user","content":"x"}]})"),
               404, "model_not_found");
  expect_error(c.request("POST", "/v1/chat/completions", "{\"model\":\"tiny\",\"messages\":[{\"role\":\"user\",\"content\":\"\xc0\xaf\"}]}"),
               400, "invalid_json");
  // Over the limits: the body (8 KiB here) and the head (2 KiB here).
  expect_error(c.request("POST", "/v1/chat/completions", std::string(10000, ' ')), 413, "request_too_large");
  expect_error(c.request("GET", "/healthz", "", {{"X-Padding", std::string(4000, 'a')}}), 431, "request_header_fields_too_large");
  // Not HTTP at all.
  auto garbage = c.raw("\x16\x03\x01\x02\x00 hello\r\n\r\n");
  EXPECT_EQ(garbage.status, 400);
  auto bad_len = c.raw("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n");
  EXPECT_EQ(bad_len.status, 400);

  // Still serving after all of that.
  EXPECT_EQ(c.request("GET", "/healthz").status, 200);
  auto metrics = c.request("GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.content_type.find("text/plain"), std::string::npos);
  EXPECT_NE(metrics.body.find("dloop_http_requests_total{route=\"/healthz\",status=\"200\"} 2"), std::string::npos) << metrics.body;
  EXPECT_NE(metrics.body.find("dloop_http_requests_total{route=\"/v1/chat/completions\",status=\"400\"} 2"), std::string::npos);
  EXPECT_NE(metrics.body.find("dloop_http_request_duration_seconds_bucket{route=\"/v1/models\",status=\"200\",le=\"+Inf\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("# TYPE dloop_http_request_duration_seconds histogram"), std::string::npos);
  EXPECT_NE(metrics.body.find("dloop_active_runs 0"), std::string::npos);
}

TEST(ServerHttp, ChatCompletionAndStreamShapes) {
  ServerFixture f(test_options("chat"));
  ASSERT_TRUE(f.ok());
  test::HttpClient c("127.0.0.1", f.port());
  auto r = c.request("POST", "/v1/chat/completions",
                     R"({"model":"tiny","messages":[{"role":"user","content":"hello"}],"max_completion_tokens":16,"seed":1})");
  ASSERT_EQ(r.status, 200) << r.body;
  Json j = body_json(r);
  EXPECT_EQ(j.find("object")->as_string(), "chat.completion");
  EXPECT_EQ(j.find("id")->as_string().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(j.find("model")->as_string(), "tiny");
  ASSERT_EQ(j.find("choices")->size(), 1u);
  const Json& choice = j.find("choices")->as_array()[0];
  EXPECT_EQ(choice.find("index")->as_int(), 0);
  EXPECT_EQ(choice.find("message")->find("role")->as_string(), "assistant");
  EXPECT_TRUE(choice.find("message")->find("content")->is_string());
  EXPECT_TRUE(choice.find("logprobs")->is_null());
  const std::string finish = choice.find("finish_reason")->as_string();
  EXPECT_TRUE(finish == "stop" || finish == "length") << finish;
  const Json* usage = j.find("usage");
  EXPECT_GT(usage->find("prompt_tokens")->as_int(), 0);
  EXPECT_EQ(usage->find("total_tokens")->as_int(),
            usage->find("prompt_tokens")->as_int() + usage->find("completion_tokens")->as_int());
  EXPECT_LE(usage->find("completion_tokens")->as_int(), 16);

  auto s = c.request("POST", "/v1/chat/completions",
                     R"({"model":"tiny","messages":[{"role":"user","content":"hello"}],"max_completion_tokens":16,
                         "stream":true,"stream_options":{"include_usage":true},"diffusing":true})");
  ASSERT_EQ(s.status, 200);
  EXPECT_EQ(s.content_type, "text/event-stream");
  std::vector<std::string> data = sse_data(s.body);
  ASSERT_GE(data.size(), 4u) << s.body;
  EXPECT_EQ(data.back(), "[DONE]");
  std::string id;
  std::string content;
  int diffusion = 0;
  std::string finish_seen;
  for (size_t i = 0; i + 1 < data.size(); ++i) {
    Json chunk = *Json::parse(data[i]);
    if (id.empty()) id = chunk.find("id")->as_string();
    EXPECT_EQ(chunk.find("id")->as_string(), id);
    const std::string object = chunk.find("object")->as_string();
    if (object == "chat.completion.diffusion") {
      ++diffusion;
      continue;
    }
    EXPECT_EQ(object, "chat.completion.chunk");
    if (i + 2 == data.size()) {  // the include_usage chunk
      EXPECT_EQ(chunk.find("choices")->size(), 0u);
      EXPECT_GT(chunk.find("usage")->find("total_tokens")->as_int(), 0);
      continue;
    }
    EXPECT_TRUE(chunk.find("usage")->is_null());
    const Json& ch = chunk.find("choices")->as_array()[0];
    if (const Json* c2 = ch.find("delta")->find("content"); c2 && c2->is_string()) content += c2->as_string();
    if (ch.find("finish_reason")->is_string()) finish_seen = ch.find("finish_reason")->as_string();
  }
  EXPECT_GT(diffusion, 0);
  EXPECT_NE(s.body.find("event: diffusion"), std::string::npos);
  EXPECT_TRUE(finish_seen == "stop" || finish_seen == "length");
}

// With --max-concurrent 1, a completion that arrives while another is generating gets 429 with
// Retry-After and the OpenAI error shape, is counted in the rejected-requests metric, and the
// first completion still finishes.
TEST(ServerHttp, ConcurrencyCapAnswers429) {
  ServerOptions o = test_options("cap");
  o.max_generations = 1;
  ServerFixture f(std::move(o));
  ASSERT_TRUE(f.ok());
  const std::string long_request =
      R"({"model":"tiny","messages":[{"role":"user","content":"write a lot"}],"max_completion_tokens":224,
          "reasoning_effort":"high","seed":3})";
  bool rejected = false;
  for (int attempt = 0; attempt < 5 && !rejected; ++attempt) {
    std::atomic<bool> done{false};
    test::HttpReply first;
    std::thread t([&] {
      test::HttpClient a("127.0.0.1", f.port());
      first = a.request("POST", "/v1/chat/completions", long_request);
      done = true;
    });
    test::HttpClient c("127.0.0.1", f.port());
    bool active = false;
    while (!done && !active) {  // until the first completion is in flight
      active = c.request("GET", "/metrics").body.find("\ndloop_active_generations 1") != std::string::npos;
    }
    if (active) {
      auto second = c.request("POST", "/v1/chat/completions",
                              R"({"model":"tiny","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":8})");
      if (!done || second.status == 429) {  // still in flight when the second arrived: it must be refused
        expect_error(second, 429, "rate_limit_exceeded");
        EXPECT_EQ(second.header("Retry-After"), "1");
        rejected = true;
      }
    }
    t.join();
    EXPECT_EQ(first.status, 200) << first.body;
  }
  ASSERT_TRUE(rejected) << "the first completion never stayed in flight long enough to be observed";
  test::HttpClient c("127.0.0.1", f.port());
  EXPECT_NE(c.request("GET", "/metrics").body.find("dloop_rejected_requests_total{reason="), std::string::npos);
}

TEST(ServerHttp, ApiKeyIsRequiredWhenSet) {
  ServerOptions o = test_options("auth");
  o.api_key = "k-123";
  ServerFixture f(o);
  ASSERT_TRUE(f.ok());
  test::HttpClient c("127.0.0.1", f.port());
  EXPECT_EQ(c.request("GET", "/healthz").status, 200);
  expect_error(c.request("GET", "/v1/models"), 401, "invalid_api_key");
  expect_error(c.request("GET", "/v1/models", "", {{"Authorization", "Bearer k-124"}}), 401, "invalid_api_key");
  expect_error(c.request("GET", "/metrics"), 401, "invalid_api_key");
  EXPECT_EQ(c.request("GET", "/v1/models", "", {{"Authorization", "Bearer k-123"}}).status, 200);
}

TEST(ServerHttp, RunsApi) {
  ServerOptions o = test_options("runs");
  ServerFixture f(o);
  ASSERT_TRUE(f.ok());
  test::HttpClient c("127.0.0.1", f.port());
  const std::string yaml =
      "name: add\\ninputs: {a: {type: number, required: true}}\\ntools: [{use: calculator}]\\n"
      "steps:\\n  - id: sum\\n    tool: calculator\\n    args: {expression: \\\"${{ inputs.a }} + 1\\\"}\\n"
      "outputs: {result: \\\"${{ steps.sum.output.result }}\\\"}\\n";
  auto created = c.request("POST", "/v1/runs", R"({"workflow_yaml":")" + yaml + R"(","inputs":{"a":41}})");
  ASSERT_EQ(created.status, 201) << created.body;
  Json run = body_json(created);
  const std::string id = run.find("id")->as_string();
  EXPECT_EQ(run.find("object")->as_string(), "workflow.run");
  EXPECT_EQ(run.find("workflow")->as_string(), "add");

  // The event stream follows the run to its end.
  auto events = c.request("GET", "/v1/runs/" + id + "/events");
  ASSERT_EQ(events.status, 200);
  EXPECT_NE(events.body.find("event: run_started"), std::string::npos) << events.body;
  EXPECT_NE(events.body.find("event: tool_result"), std::string::npos);
  EXPECT_NE(events.body.find("event: run_completed"), std::string::npos);
  EXPECT_NE(events.body.find("event: done"), std::string::npos);
  EXPECT_NE(events.body.find("id: 1\n"), std::string::npos);

  auto got = c.request("GET", "/v1/runs/" + id);
  ASSERT_EQ(got.status, 200);
  Json g = body_json(got);
  EXPECT_EQ(g.find("status")->as_string(), "completed");
  EXPECT_EQ(g.find("outputs")->find("result")->dump(), "42");
  EXPECT_GE(g.find("steps")->size(), 1u);
  // Resume from a later event: only what follows is sent.
  auto tail = c.request("GET", "/v1/runs/" + id + "/events?after=1");
  EXPECT_EQ(tail.body.find("event: run_started"), std::string::npos);

  auto list = c.request("GET", "/v1/runs?limit=5");
  EXPECT_EQ(list.status, 200);
  EXPECT_EQ(body_json(list).find("data")->size(), 1u);

  expect_error(c.request("POST", "/v1/runs/" + id + "/cancel"), 409, "run_not_active");
  expect_error(c.request("GET", "/v1/runs/nope"), 404, "run_not_found");
  expect_error(c.request("GET", "/v1/runs/nope/events"), 404, "run_not_found");
  expect_error(c.request("POST", "/v1/runs", R"({"workflow_yaml":"name: x\nstpes: []\n"})"), 400, "invalid_workflow");
  auto bad = c.request("POST", "/v1/runs", R"({"workflow_yaml":"name: x\nstpes: []\n"})");
  EXPECT_NE(body_json(bad).find("error")->find("message")->as_string().find("workflow_yaml:2:1"), std::string::npos) << bad.body;
  expect_error(c.request("POST", "/v1/runs", R"({"workflow":"missing.yaml"})"), 400, "workflow_not_found");
  expect_error(c.request("POST", "/v1/runs", R"({"workflow_yaml":")" + yaml + R"(","inputs":{}})"), 400, "invalid_inputs");
  expect_error(c.request("POST", "/v1/runs", R"({"workflow_yaml":"x","wat":1})"), 400, "unknown_parameter");
}

// A run that sleeps in a tool: cancel stops it (it ends `cancelled`, resumable), and a graceful
// shutdown with a run in flight cancels that run the same way before the server returns.
TEST(ServerHttp, CancelAndShutdownWithRunsInFlight) {
  ServerOptions o = test_options("cancel");
  o.allow_command_tools = true;  // a shell workflow without an API key (docs/server.md "Threat model")
  auto f = std::make_unique<ServerFixture>(o);
  ASSERT_TRUE(f->ok());
  test::HttpClient c("127.0.0.1", f->port());
  const std::string yaml =
      "name: nap\\ntools:\\n  - use: shell\\n    with: {allow: [sleep]}\\nsteps:\\n  - id: nap\\n    tool: shell\\n"
      "    args: {argv: [sleep, \\\"60\\\"]}\\n    timeout: 120s\\n";
  auto start_run = [&]() {
    auto r = c.request("POST", "/v1/runs", R"({"workflow_yaml":")" + yaml + R"("})");
    EXPECT_EQ(r.status, 201) << r.body;
    const std::string id = body_json(r).find("id")->as_string();
    // Wait (bounded) until the tool is running: its tool_call event is in the log.
    for (int i = 0; i < 300; ++i) {
      auto ev = c.request("GET", "/v1/runs/" + id);
      if (ev.body.find("\"nap\"") != std::string::npos && body_json(ev).find("steps")->size() > 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return id;
  };
  const std::string first = start_run();
  auto cancel = c.request("POST", "/v1/runs/" + first + "/cancel");
  EXPECT_EQ(cancel.status, 202) << cancel.body;
  EXPECT_EQ(body_json(cancel).find("status")->as_string(), "cancelling");
  std::string status;
  for (int i = 0; i < 500 && status != "cancelled"; ++i) {
    status = body_json(c.request("GET", "/v1/runs/" + first)).find("status")->as_string();
    if (status != "cancelled") std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(status, "cancelled");
  auto events = c.request("GET", "/v1/runs/" + first + "/events");
  EXPECT_NE(events.body.find("event: run_cancelled"), std::string::npos) << events.body;

  const std::string second = start_run();
  f->stop();  // returns long before the 60 s sleep would end
  auto store = memory::Store::open(o.db_path);
  ASSERT_TRUE(store.ok());
  auto run = (*store)->get_run(second);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status, memory::RunStatus::kCancelled);
}

}  // namespace
}  // namespace dloop::server
