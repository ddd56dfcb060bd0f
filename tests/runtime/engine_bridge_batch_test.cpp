// EngineBridge batching: tool calls awaited concurrently by several coroutines reach the engine
// together (Engine::tool_call_batch) and each gets exactly the result the engine returns for it
// alone; a bad request fails alone; a model that does not open fails every queued request.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "dloop/engine/random_model.h"
#include "dloop/runtime/engine_bridge.h"

namespace dloop::runtime {
namespace {

namespace asio = boost::asio;

std::string model_file() {
  engine::RandomModelSpec spec;
  spec.name = "bridge";
  spec.n_layer = 2;
  spec.n_embd = 64;
  spec.n_head = 4;
  spec.n_head_kv = 2;
  spec.n_ff = 128;
  spec.n_vocab = 512;
  spec.n_ctx = 1024;
  const std::string path = testing::TempDir() + "/bridge-batch.gguf";
  EXPECT_TRUE(engine::write_random_model(spec, path).ok());
  return path;
}

engine::ToolCallRequest request(int i) {
  auto schema = base::Json::parse(R"({"type": "object", "properties": {"city": {"type": "string", "maxLength": 8},
      "days": {"type": "integer", "minimum": 1, "maximum": 7}}, "required": ["city"]})");
  engine::ToolCallRequest r;
  r.messages = {{"system", "You call tools."}, {"user", "weather " + std::to_string(i)}};
  r.tools = {{"get_weather", "Get the weather.", *schema}, {"get_time", "Get the time.", *schema}};
  r.effort = i % 2 ? engine::ReasoningEffort::kLow : engine::ReasoningEffort::kMedium;
  r.answer_length = 40;
  r.string_slot_tokens = 6;
  r.number_slot_tokens = 3;
  return r;
}

// A plain function, not a capturing lambda: the coroutine frame must not point into a closure
// that is gone when the coroutine resumes.
asio::awaitable<void> call(EngineBridge* bridge, engine::ToolCallRequest request,
                           std::optional<base::Result<engine::ToolCallResult>>* out) {
  auto op = bridge->tool_call(std::move(request));
  out->emplace(co_await std::move(op));
}

std::vector<base::Result<engine::ToolCallResult>> run_concurrently(EngineBridge& bridge,
                                                                   const std::vector<engine::ToolCallRequest>& reqs) {
  asio::io_context io;
  std::vector<std::optional<base::Result<engine::ToolCallResult>>> out(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    auto op = call(&bridge, reqs[i], &out[i]);
    asio::co_spawn(io, std::move(op), asio::detached);
  }
  io.run();
  std::vector<base::Result<engine::ToolCallResult>> results;
  for (auto& o : out) results.push_back(std::move(*o));
  return results;
}

TEST(EngineBridgeBatch, ConcurrentCallsEqualEachAlone) {
  const std::string path = model_file();
  EngineBridge bridge(path, 2);
  auto alone_engine = engine::Engine::open({path, 2, {}});
  ASSERT_TRUE(alone_engine.ok()) << alone_engine.status().message();
  std::vector<engine::ToolCallRequest> reqs;
  for (int i = 0; i < 5; ++i) reqs.push_back(request(i));
  reqs[3].tool_choice = engine::ToolChoice::named("no_such_tool");  // fails alone
  auto results = run_concurrently(bridge, reqs);
  ASSERT_EQ(results.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    auto alone = (*alone_engine)->tool_call(reqs[i]);
    ASSERT_EQ(results[i].ok(), alone.ok()) << i;
    if (!alone.ok()) {
      EXPECT_EQ(results[i].status().message(), alone.status().message());
      continue;
    }
    EXPECT_EQ(results[i]->is_call, alone->is_call) << i;
    EXPECT_EQ(results[i]->name, alone->name) << i;
    EXPECT_EQ(results[i]->arguments, alone->arguments) << i;
    EXPECT_EQ(results[i]->answer, alone->answer) << i;
  }
}

TEST(EngineBridgeBatch, UnopenableModelFailsEveryRequest) {
  EngineBridge bridge(testing::TempDir() + "/missing-model.gguf", 1);
  auto results = run_concurrently(bridge, {request(0), request(1), request(2)});
  for (auto& r : results) {
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("missing-model.gguf"), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace dloop::runtime
