// In process: an agent step driven by a scripted engine backend (EngineBridge's test seam). The
// first run is interrupted (SIGINT, as Ctrl-C) while the model is asked for its third turn; the
// run ends cancelled with two committed turns. Resume then reuses both recorded model outputs and
// both recorded tool results: the backend is asked once more (turn 3), the side-effecting tool is
// not run again, and every turn has exactly one model_call in the log. Also: retries with
// backoff, repeat_until's cap, parallel branches and max_turns as a step failure.
#include <chrono>
#include <csignal>
#include <map>
#include <thread>

#include "dloop/runtime/driver.h"
#include "dloop/workflows/load.h"
#include "e2e_util.h"

namespace dloop::test {
namespace {

using base::Json;

std::shared_ptr<const workflows::Workflow> load(const std::string& yaml) {
  auto wf = workflows::load_string(yaml, "test.yaml");
  EXPECT_TRUE(wf.ok()) << wf.status().to_string();
  return std::make_shared<const workflows::Workflow>(std::move(wf).value());
}

engine::ToolCallResult call(const std::string& item) {
  engine::ToolCallResult r;
  r.is_call = true;
  r.name = "append";
  r.arguments_json = Json::object();
  r.arguments_json.set("item", item);
  r.arguments = r.arguments_json.dump(Json::Style::kPython);
  r.prompt_tokens = 10;
  r.forward_passes = 2;
  return r;
}

engine::ToolCallResult answer(const std::string& text) {
  engine::ToolCallResult r;
  r.answer = text;
  return r;
}

const char* kAgentFlow = R"(
name: agent-resume
tools:
  - name: append
    command: [./append.sh]
    parameters: {type: object, properties: {item: {type: string}}, required: [item]}
steps:
  - id: helper
    agent: {prompt: "Append t1 and t2, then say done.", tools: [append], max_turns: 5}
outputs: {answer: "${{ steps.helper.output }}"}
)";

runtime::RunRequest request(const std::filesystem::path& dir, std::shared_ptr<const workflows::Workflow> wf) {
  runtime::RunRequest r;
  r.workflow = std::move(wf);
  r.workflow_path = (dir / "flow.yaml").string();
  r.workflow_hash = "sha256:test";
  r.workspace = dir;
  return r;
}

TEST(AgentResume, InterruptedAgentReusesRecordedTurns) {
  auto dir = fresh_dir("agent_resume");
  std::filesystem::copy_file(std::string(DLOOP_SOURCE_DIR) + "/tests/runtime/data/append.sh", dir / "append.sh");
  auto wf = load(kAgentFlow);
  std::shared_ptr<memory::Store> store = open_db(dir / "state.db");
  ASSERT_NE(store, nullptr);

  int asked = 0;
  auto first_backend = [&](const engine::ToolCallRequest& req) -> base::Result<engine::ToolCallResult> {
    ++asked;
    if (asked == 1) return call("t1");
    if (asked == 2) {
      EXPECT_EQ(req.messages.back().role, "tool");
      return call("t2");
    }
    std::raise(SIGINT);  // Ctrl-C while the model works on turn 3
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the loop handles it meanwhile
    return answer("too late");
  };
  runtime::DriverOptions opts;
  opts.store = store;
  opts.engine = std::make_shared<runtime::EngineBridge>(first_backend);
  std::vector<runtime::RunRequest> reqs;
  reqs.push_back(request(dir, wf));
  auto first = runtime::run_workflows(std::move(reqs), opts);
  ASSERT_EQ(first.runs.size(), 1u);
  EXPECT_TRUE(first.interrupted);
  EXPECT_EQ(first.runs[0].status.code(), base::Code::kCancelled) << first.runs[0].status.to_string();
  const std::string run_id = first.runs[0].run_id;
  EXPECT_EQ(slurp((dir / "effects.log").string()), "t1\nt2\n");
  auto run = store->get_run(run_id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status, memory::RunStatus::kCancelled);

  int asked_again = 0;
  size_t seen_messages = 0;
  auto second_backend = [&](const engine::ToolCallRequest& req) -> base::Result<engine::ToolCallResult> {
    ++asked_again;
    seen_messages = req.messages.size();
    return answer("done");
  };
  opts.engine = std::make_shared<runtime::EngineBridge>(second_backend);
  runtime::RunRequest again = request(dir, wf);
  again.resume_run_id = run_id;
  again.inputs = run->inputs;
  reqs.clear();
  reqs.push_back(std::move(again));
  auto second = runtime::run_workflows(std::move(reqs), opts);
  ASSERT_TRUE(second.runs[0].status.ok()) << second.runs[0].status.to_string();
  EXPECT_EQ(second.runs[0].outputs.find("answer")->as_string(), "done");
  EXPECT_EQ(asked_again, 1);
  EXPECT_EQ(seen_messages, 5u);  // the prompt, then (assistant call, tool result) x 2
  EXPECT_EQ(slurp((dir / "effects.log").string()), "t1\nt2\n");

  auto events = store->events(run_id);
  ASSERT_TRUE(events.ok());
  std::map<int64_t, int> model_calls_per_turn;
  int tool_results = 0;
  for (const auto& e : *events) {
    if (e.type == "model_call") model_calls_per_turn[e.turn]++;
    if (e.type == "tool_result") ++tool_results;
  }
  EXPECT_EQ(model_calls_per_turn, (std::map<int64_t, int>{{1, 1}, {2, 1}, {3, 1}}));
  EXPECT_EQ(tool_results, 2);
  EXPECT_TRUE(store->check_integrity().ok());
}

TEST(Executor, RetriesRepeatParallelAndMaxTurns) {
  auto dir = fresh_dir("executor");
  std::filesystem::copy_file(std::string(DLOOP_SOURCE_DIR) + "/tests/runtime/data/append.sh", dir / "append.sh");
  auto wf = load(R"(
name: exec
tools:
  - use: calculator
  - name: append
    command: [./append.sh]
    parameters: {type: object, properties: {item: {type: string}}, required: [item]}
  - name: flaky
    command: [sh, -c, "echo x >> tries; test $(wc -l < tries) -ge 3 && echo '{\"ok\": true}' || exit 1"]
    parameters: {type: object}
steps:
  - id: flaky_step
    tool: flaky
    retry: {max_attempts: 4, backoff: 10ms, multiplier: 2}
  - id: loop
    repeat_until: ${{ index >= 9 }}
    max_iterations: 3
    steps:
      - id: tick
        tool: append
        args: {item: "tick${{ index }}"}
  - id: both
    parallel:
      - id: left
        tool: calculator
        args: {expression: "2 + 2"}
      - id: right
        set: {v: right}
  - id: chatty
    agent: {prompt: "Keep calling.", tools: [append], max_turns: 2}
    continue_on_error: true
outputs:
  flaky: ${{ steps.flaky_step.output.ok }}
  last_tick: ${{ steps.loop.output.item }}
  both: ${{ steps.both.output }}
  chatty: ${{ steps.chatty.status }}
  chatty_error: ${{ steps.chatty.error.message }}
)");
  std::shared_ptr<memory::Store> store = open_db(dir / "state.db");
  runtime::DriverOptions opts;
  opts.store = store;
  opts.engine = std::make_shared<runtime::EngineBridge>(
      [](const engine::ToolCallRequest&) -> base::Result<engine::ToolCallResult> { return call("again"); });
  std::vector<runtime::RunRequest> reqs;
  reqs.push_back(request(dir, wf));
  auto r = runtime::run_workflows(std::move(reqs), opts);
  ASSERT_TRUE(r.runs[0].status.ok()) << r.runs[0].status.to_string();
  const Json& out = r.runs[0].outputs;
  EXPECT_EQ(*out.find("flaky"), Json(true));
  EXPECT_EQ(out.find("last_tick")->as_string(), "tick2");
  EXPECT_EQ(out.find("both")->find("left")->find("result")->as_int(), 4);
  EXPECT_EQ(out.find("both")->find("right")->find("v")->as_string(), "right");
  EXPECT_EQ(out.find("chatty")->as_string(), "failed");
  EXPECT_NE(out.find("chatty_error")->as_string().find("max_turns (2)"), std::string::npos);
  auto steps = store->steps(r.runs[0].run_id);
  ASSERT_TRUE(steps.ok());
  for (const auto& s : *steps) {
    if (s.step_path == "flaky_step") {
      EXPECT_EQ(s.attempts, 3);
    }
  }
  EXPECT_EQ(slurp((dir / "effects.log").string()), "tick0\ntick1\ntick2\nagain\nagain\n");
}

}  // namespace
}  // namespace dloop::test
