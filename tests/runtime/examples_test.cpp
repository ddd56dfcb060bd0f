// End-to-end: `dloop run` on each workflow in examples/, checking the printed outputs and the
// run's rows in the state database; plus the run/resume exit codes (validation errors, bad
// inputs, a failed run, resume of a completed run, resume refusing a changed workflow file).
// Agent steps are checked for validity and faithful recording, not for what the model says.
#include <cmath>

#include "e2e_util.h"

namespace dloop::test {
namespace {

using base::Json;
const std::string kSrc = DLOOP_SOURCE_DIR;

std::string common_flags(const std::filesystem::path& dir) {
  return " --db " + (dir / "state.db").string() + " --model " + test_model() + " --workspace " + dir.string();
}

Json parse_out(const Outcome& o) {
  auto j = Json::parse(o.out);
  EXPECT_TRUE(j.ok()) << o.out << "\n" << o.err;
  return j.ok() ? std::move(j).value() : Json();
}

const memory::StepRecord* find_step(const std::vector<memory::StepRecord>& steps, const std::string& path) {
  for (const auto& s : steps) {
    if (s.step_path == path) return &s;
  }
  return nullptr;
}

// An agent step either completed with the output of its last recorded model_call, or failed
// with a recorded step_failed; every model_call carries counts and an output.
void check_agent_recorded(memory::Store& store, const std::string& run_id, const std::string& path,
                          const Json& output, const std::string& status) {
  auto events = store.events(run_id);
  ASSERT_TRUE(events.ok());
  const memory::Event* last_call = nullptr;
  bool failed = false;
  for (const auto& e : *events) {
    if (e.step_path != path) continue;
    if (e.type == "model_call") {
      last_call = &e;
      EXPECT_NE(e.payload.find("prompt_tokens"), nullptr);
      EXPECT_NE(e.payload.find("forward_passes"), nullptr);
      ASSERT_NE(e.payload.find("output"), nullptr);
    }
    if (e.type == "step_failed") failed = true;
  }
  if (status == "succeeded") {
    ASSERT_NE(last_call, nullptr);
    const Json& out = *last_call->payload.find("output");
    EXPECT_EQ(out.find("type")->as_string(), "answer");
    if (output.is_string()) {
      EXPECT_EQ(out.find("text")->as_string(), output.as_string());
    }
  } else {
    EXPECT_EQ(status, "failed");
    EXPECT_TRUE(failed);
  }
}

TEST(Examples, UnitConvert) {
  auto dir = fresh_dir("unit");
  Outcome o = run_dloop("run " + kSrc + "/examples/unit_convert.yaml --input value=12 --input unit=km" +
                        common_flags(dir));
  ASSERT_EQ(o.code, 0) << o.err;
  Json out = parse_out(o);
  EXPECT_EQ(out.find("to")->as_string(), "mi");
  EXPECT_NEAR(out.find("result")->as_double(), 12 / 1.609344, 1e-9);
  EXPECT_NEAR(out.find("rounded")->as_double(), 7.456, 1e-9);
  const std::string run_id = run_id_from(o.err);
  ASSERT_FALSE(run_id.empty()) << o.err;
  auto store = open_db(dir / "state.db");
  auto run = store->get_run(run_id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status, memory::RunStatus::kCompleted);
  EXPECT_EQ(run->outputs, out);
  auto steps = store->steps(run_id);
  ASSERT_TRUE(steps.ok());
  for (const char* p : {"factor", "convert", "round"}) {
    const auto* s = find_step(*steps, p);
    ASSERT_NE(s, nullptr) << p;
    EXPECT_EQ(s->status, memory::StepStatus::kCompleted) << p;
  }
  auto call = store->recorded(run_id, memory::CallKey{"convert", 1, "tool_call", 0});
  ASSERT_TRUE(call.ok() && call->has_value());
  EXPECT_EQ((*call)->payload.find("arguments")->find("expression")->as_string().substr(0, 2), "12");
  auto result = store->recorded_tool_result(run_id, "convert", 1, 0);
  ASSERT_TRUE(result.ok() && result->has_value());
  EXPECT_NEAR((*result)->payload.find("result")->find("result")->as_double(), 12 / 1.609344, 1e-9);
  check_agent_recorded(*store, run_id, "ask_model", *out.find("model_answer"), out.find("model_status")->as_string());
  EXPECT_TRUE(store->check_integrity().ok());
}

TEST(Examples, TicketTriage) {
  auto dir = fresh_dir("triage");
  Outcome o = run_dloop("run " + kSrc + "/examples/ticket_triage.yaml --input email=ada@example.com" +
                        " --input database=" + kSrc + "/examples/data/support.db" + common_flags(dir));
  ASSERT_EQ(o.code, 0) << o.err;
  Json out = parse_out(o);
  EXPECT_EQ(out.find("customer")->as_string(), "Ada Lovelace");
  ASSERT_EQ(out.find("orders")->size(), 2u);
  EXPECT_EQ(out.find("orders")->as_array()[1].as_array()[2].as_string(), "refunded");
  const std::string status = out.find("classify_status")->as_string();
  if (status == "succeeded") {
    const std::string cat = out.find("classification")->find("category")->as_string();
    EXPECT_TRUE(cat == "billing" || cat == "bug" || cat == "other") << cat;
    EXPECT_TRUE(out.find("classification")->find("urgent")->is_bool());
  }
  const std::string run_id = run_id_from(o.err);
  auto store = open_db(dir / "state.db");
  check_agent_recorded(*store, run_id, "classify", *out.find("classification"), status);
  auto kv = store->kv_get("ticket-triage", "triage/ada@example.com");
  ASSERT_TRUE(kv.ok() && kv->has_value());
  EXPECT_EQ((**kv).find("orders")->as_int(), 2);
  EXPECT_NE(out.find("remembered")->dump().find("category"), std::string::npos) << out.dump();
  auto steps = store->steps(run_id);
  ASSERT_TRUE(steps.ok());
  EXPECT_EQ(find_step(*steps, "orders")->status, memory::StepStatus::kCompleted);
  EXPECT_EQ(find_step(*steps, "remember")->status, memory::StepStatus::kCompleted);

  // An unknown customer: the orders step is skipped, the run still completes.
  Outcome none = run_dloop("run " + kSrc + "/examples/ticket_triage.yaml --input email=nobody@example.com" +
                           " --input database=" + kSrc + "/examples/data/support.db" + common_flags(dir));
  ASSERT_EQ(none.code, 0) << none.err;
  Json out2 = parse_out(none);
  EXPECT_TRUE(out2.find("customer")->is_null());
  auto steps2 = store->steps(run_id_from(none.err));
  ASSERT_TRUE(steps2.ok());
  EXPECT_EQ(find_step(*steps2, "orders")->status, memory::StepStatus::kSkipped);
}

TEST(Examples, OrganizeFiles) {
  auto dir = fresh_dir("organize");
  std::filesystem::copy(kSrc + "/examples/workspace", dir, std::filesystem::copy_options::recursive);
  Outcome o = run_dloop("run " + kSrc + "/examples/organize_files.yaml" + common_flags(dir));
  ASSERT_EQ(o.code, 0) << o.err;
  Json out = parse_out(o);
  EXPECT_EQ(out.find("count")->as_int(), 4);
  EXPECT_EQ(slurp((dir / "sorted/markdown/report.md").string()), "# Report\n\nAll tests pass.\n");
  EXPECT_TRUE(std::filesystem::exists(dir / "sorted/data/orders.csv"));
  EXPECT_TRUE(std::filesystem::exists(dir / "sorted/text/notes.txt"));
  EXPECT_TRUE(std::filesystem::exists(dir / "sorted/text/todo.txt"));
  auto index = Json::parse(slurp((dir / "sorted/index.json").string()));
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(*index, *out.find("placed"));
  const std::string run_id = run_id_from(o.err);
  auto store = open_db(dir / "state.db");
  auto steps = store->steps(run_id);
  ASSERT_TRUE(steps.ok());
  for (int i = 0; i < 4; ++i) {
    for (const char* s : {"read", "ext", "copy", "placed"}) {
      std::string path = "sort[" + std::to_string(i) + "]/" + s;
      const auto* rec = find_step(*steps, path);
      ASSERT_NE(rec, nullptr) << path;
      EXPECT_EQ(rec->status, memory::StepStatus::kCompleted) << path;
    }
  }
  check_agent_recorded(*store, run_id, "suggest", *out.find("suggestion"), out.find("suggestion_status")->as_string());
}

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p);
  f << text;
}

TEST(RunCli, ExitCodes) {
  auto dir = fresh_dir("codes");
  const std::string db = " --db " + (dir / "s.db").string();
  write(dir / "bad.yaml", "name: x\nstpes: []\n");
  Outcome bad = run_dloop("run " + (dir / "bad.yaml").string() + db);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("bad.yaml:2:1: error: unknown key 'stpes'"), std::string::npos) << bad.err;

  write(dir / "calc.yaml",
        "name: calc\ninputs: {x: {type: integer, required: true}}\ntools: [{use: calculator}]\n"
        "steps:\n  - id: c\n    tool: calculator\n    args: {expression: \"10 / ${{ inputs.x }}\"}\n"
        "outputs: {y: \"${{ steps.c.output.result }}\"}\n");
  const std::string calc = "run " + (dir / "calc.yaml").string() + db;
  Outcome missing = run_dloop(calc);
  EXPECT_EQ(missing.code, 2) << missing.err;
  Outcome typed = run_dloop(calc + " --input x=abc");
  EXPECT_EQ(typed.code, 2) << typed.err;
  Outcome unknown = run_dloop(calc + " --input x=1 --input z=2");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("unknown input 'z'"), std::string::npos) << unknown.err;

  Outcome ok = run_dloop(calc + " --input x=4");
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(parse_out(ok).find("y")->as_double(), 2.5);
  Outcome failed = run_dloop(calc + " --input x=0");
  EXPECT_EQ(failed.code, 1) << failed.err;
  EXPECT_NE(failed.err.find("failed"), std::string::npos) << failed.err;

  // Resume of a completed run prints its outputs; a changed file is refused.
  const std::string id = run_id_from(ok.err);
  Outcome again = run_dloop("resume " + id + db);
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(parse_out(again).find("y")->as_double(), 2.5);
  const std::string failed_id = run_id_from(failed.err);
  write(dir / "calc.yaml", slurp((dir / "calc.yaml").string()) + "# edited\n");
  Outcome changed = run_dloop("resume " + failed_id + db);
  EXPECT_EQ(changed.code, 2);
  EXPECT_NE(changed.err.find("changed since run"), std::string::npos) << changed.err;

  // Several input sets in one process, two at a time.
  Outcome many = run_dloop(calc + " --inputs-json '{\"x\": 1}' --inputs-json '{\"x\": 2}' "
                                  "--inputs-json '{\"x\": 5}' --parallel 2");
  ASSERT_EQ(many.code, 0) << many.err;
  Json all = parse_out(many);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all.as_array()[2].find("outputs")->find("y")->as_int(), 2);
}

}  // namespace
}  // namespace dloop::test
