// In process: replay through runtime::run_workflows with a ReplayLog (no binary, no model file).
// A run is recorded with a scripted engine backend (EngineBridge's test seam); a strict replay of
// it serves both model outputs and the tool result from the record with no engine at all; a
// live-model replay with a different backend reuses the identical tool call, runs the changed one
// for real, and lists every model call with its recorded and new output.
#include "dloop/runtime/driver.h"
#include "dloop/workflows/load.h"
#include "e2e_util.h"

namespace dloop::test {
namespace {

using base::Json;

const char* kFlow = R"(
name: live-replay
tools: [{use: calculator}]
steps:
  - id: solve
    agent: {prompt: "What is 1 + 1?", tools: [calculator], max_turns: 4}
  - id: after
    set: {answer: "${{ steps.solve.output }}", run: "${{ run.id }}"}
outputs: {answer: "${{ steps.after.output.answer }}", run: "${{ steps.after.output.run }}"}
)";

engine::ToolCallResult calc(const std::string& expression) {
  engine::ToolCallResult r;
  r.is_call = true;
  r.name = "calculator";
  r.arguments_json = Json::object();
  r.arguments_json.set("expression", expression);
  r.arguments = r.arguments_json.dump(Json::Style::kPython);
  return r;
}

engine::ToolCallResult say(const std::string& text) {
  engine::ToolCallResult r;
  r.answer = text;
  return r;
}

// The scripted model: the k-th turn (by the number of messages) gets script[k].
runtime::EngineBridge::Backend script(std::vector<engine::ToolCallResult> turns) {
  return [turns](const engine::ToolCallRequest& req) -> base::Result<engine::ToolCallResult> {
    const size_t turn = (req.messages.size() - 1) / 2;
    if (turn >= turns.size()) return base::out_of_range("no scripted turn");
    return turns[turn];
  };
}

struct Fixture {
  std::shared_ptr<const workflows::Workflow> wf;
  std::filesystem::path dir;
  runtime::RunRequest request() const {
    runtime::RunRequest r;
    r.workflow = wf;
    r.workflow_path = (dir / "flow.yaml").string();
    r.workflow_hash = "sha256:test";
    r.workspace = dir;
    return r;
  }
};

runtime::DriverResult run_one(runtime::RunRequest r, std::shared_ptr<memory::Store> store,
                              std::shared_ptr<runtime::EngineBridge> engine) {
  runtime::DriverOptions opts;
  opts.store = std::move(store);
  opts.engine = std::move(engine);
  std::vector<runtime::RunRequest> reqs;
  reqs.push_back(std::move(r));
  return runtime::run_workflows(std::move(reqs), opts);
}

TEST(ReplayInProcess, StrictAndLiveModel) {
  Fixture f;
  f.dir = fresh_dir("replay_inprocess");
  auto wf = workflows::load_string(kFlow, "flow.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status().to_string();
  f.wf = std::make_shared<const workflows::Workflow>(std::move(wf).value());

  // Record.
  std::shared_ptr<memory::Store> store = open_db(f.dir / "state.db");
  auto recorded = run_one(f.request(), store,
                          std::make_shared<runtime::EngineBridge>(script({calc("1 + 1"), say("two")})));
  ASSERT_TRUE(recorded.runs[0].status.ok()) << recorded.runs[0].status.to_string();
  const std::string id = recorded.runs[0].run_id;
  EXPECT_EQ(recorded.runs[0].outputs.find("run")->as_string(), id);
  auto run = store->get_run(id);
  auto events = store->events(id);
  ASSERT_TRUE(run.ok() && events.ok());
  // The model_call records what replay and traces need.
  for (const auto& e : *events) {
    if (e.type != "model_call") continue;
    const Json* req = e.payload.find("request");
    ASSERT_NE(req, nullptr);
    EXPECT_EQ(req->find("tool_definitions")->as_array()[0].find("name")->as_string(), "calculator");
    EXPECT_TRUE(req->find("tool_definitions")->as_array()[0].find("parameters")->is_object());
    EXPECT_EQ(req->find("tool_choice")->as_string(), "auto");
    EXPECT_TRUE(req->find("decoding")->find("threshold")->is_number());
    EXPECT_TRUE(req->find("decoding")->find("seed")->is_null());
    EXPECT_TRUE(e.payload.find("started_ms")->is_int());
    EXPECT_EQ(e.payload.find("model")->as_string(), "(test backend)");
  }

  // Strict: no engine at all, everything from the record, into a scratch database.
  auto strict = std::make_shared<runtime::ReplayLog>(*run, *events, runtime::ReplayLog::Mode::kStrict);
  runtime::RunRequest r = f.request();
  r.inputs = run->inputs;
  r.replay = strict;
  auto scratch = memory::Store::open(":memory:");
  ASSERT_TRUE(scratch.ok());
  auto replayed = run_one(std::move(r), std::move(scratch).value(), nullptr);
  ASSERT_TRUE(replayed.runs[0].status.ok()) << replayed.runs[0].status.to_string();
  EXPECT_FALSE(strict->divergence().has_value()) << strict->divergence()->report();
  EXPECT_EQ(strict->model_calls_served, 2);
  EXPECT_EQ(strict->tool_results_served, 1);
  EXPECT_EQ(replayed.runs[0].outputs, recorded.runs[0].outputs);  // run.id is the recorded one

  // Live model: the same first call (its tool result is reused), then a different call (it runs
  // for real), then a different answer.
  auto live = std::make_shared<runtime::ReplayLog>(*run, *events, runtime::ReplayLog::Mode::kLiveModel);
  r = f.request();
  r.inputs = run->inputs;
  r.replay = live;
  scratch = memory::Store::open(":memory:");
  auto relived = run_one(std::move(r), std::move(scratch).value(),
                         std::make_shared<runtime::EngineBridge>(
                             script({calc("1 + 1"), calc("2 * 2"), say("four")})));
  ASSERT_TRUE(relived.runs[0].status.ok()) << relived.runs[0].status.to_string();
  EXPECT_EQ(relived.runs[0].outputs.find("answer")->as_string(), "four");
  ASSERT_EQ(live->live_calls.size(), 3u);
  EXPECT_TRUE(live->live_calls[0].same());
  EXPECT_FALSE(live->live_calls[1].same());
  EXPECT_EQ(live->live_calls[1].recorded.find("text")->as_string(), "two");
  EXPECT_EQ(live->live_calls[1].got.find("arguments")->find("expression")->as_string(), "2 * 2");
  EXPECT_TRUE(live->live_calls[2].recorded.is_null());  // the record had no third turn
  EXPECT_EQ(live->live_calls[2].turn, 3);
  EXPECT_EQ(live->tool_results_served, 1);
  EXPECT_EQ(live->tools_run_live, 1);
  ASSERT_FALSE(live->changes().empty());
  EXPECT_EQ(live->changes()[0].step_path, "solve");
  EXPECT_EQ(live->changes()[0].what, "step output");
  EXPECT_EQ(live->changes()[0].expected, "\"two\"");
  EXPECT_EQ(live->changes()[0].got, "\"four\"");
  // The record is untouched.
  auto after = store->events(id);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->size(), events->size());
}

TEST(ReplayInProcess, RunRecordedWithoutAModelReplaysIdentically) {
  Fixture f;
  f.dir = fresh_dir("replay_no_model");
  auto wf = workflows::load_string(kFlow, "flow.yaml");
  ASSERT_TRUE(wf.ok());
  f.wf = std::make_shared<const workflows::Workflow>(std::move(wf).value());
  std::shared_ptr<memory::Store> store = open_db(f.dir / "state.db");
  auto recorded = run_one(f.request(), store, nullptr);  // agent step: model_error, the run fails
  ASSERT_FALSE(recorded.runs[0].status.ok());
  const std::string id = recorded.runs[0].run_id;
  auto run = store->get_run(id);
  auto events = store->events(id);
  ASSERT_TRUE(run.ok() && events.ok());
  EXPECT_EQ(run->status, memory::RunStatus::kFailed);
  auto log = std::make_shared<runtime::ReplayLog>(*run, *events, runtime::ReplayLog::Mode::kStrict);
  runtime::RunRequest r = f.request();
  r.replay = log;
  auto scratch = memory::Store::open(":memory:");
  auto replayed = run_one(std::move(r), std::move(scratch).value(), nullptr);
  EXPECT_FALSE(replayed.runs[0].status.ok());
  EXPECT_FALSE(log->divergence().has_value()) << log->divergence()->report();
}

TEST(ReplayInProcess, FirstDifferenceNamesTheJsonPath) {
  std::string where, a, b;
  auto x = Json::parse(R"({"m": [{"role": "user", "content": "hi"}], "k": 1})");
  auto y = Json::parse(R"({"m": [{"role": "user", "content": "ho"}], "k": 1})");
  ASSERT_TRUE(x.ok() && y.ok());
  EXPECT_TRUE(runtime::first_difference(*x, *y, "request", &where, &a, &b));
  EXPECT_EQ(where, "request.m[0].content");
  EXPECT_EQ(a, "\"hi\"");
  EXPECT_EQ(b, "\"ho\"");
  EXPECT_FALSE(runtime::first_difference(*x, *x, "", &where, &a, &b));
  auto z = Json::parse(R"({"m": [{"role": "user", "content": "hi"}, 2], "k": 1})");
  EXPECT_TRUE(runtime::first_difference(*x, *z, "", &where, &a, &b));
  EXPECT_EQ(where, "m[1]");
  EXPECT_EQ(a, "(absent: 1 items)");
  EXPECT_EQ(b, "2");
  runtime::Divergence d{"loop[2]/ask", 2, 3, "model request", "messages[1].content", "\"a\"", "\"b\""};
  EXPECT_EQ(d.report(), "divergence at step 'loop[2]/ask' (attempt 2, turn 3): model request differs at "
                        "messages[1].content\n  expected: \"a\"\n  got:      \"b\"\n");
}

}  // namespace
}  // namespace dloop::test
