// Traces and replay, end to end through the `dloop` binary:
// - the golden traces under tests/runtime/data/golden (runs of the three examples on the bundled
//   model, exported with `dloop trace export`) replay identically against the workflow files next
//   to them: no model is loaded, so this is the workflow-regression test CI runs;
// - export -> import -> replay is identical, and export of the import is byte-identical;
// - an edited trace or an edited workflow yields the exact divergence report (step, turn, field,
//   expected vs got) and exit 1; truncated and malformed files fail with the line number, exit 2;
// - `trace import` twice; `runs diff`; OTLP/JSON spans; secrets redacted in exports.
#include <set>

#include "dloop/base/json.h"
#include "dloop/base/strings.h"
#include "e2e_util.h"

namespace dloop::test {
namespace {

using base::Json;

const std::string kGolden = std::string(DLOOP_SOURCE_DIR) + "/tests/runtime/data/golden/";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

void write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// Replaces the line of event `seq` with `edit(event)`.
std::string edit_event(const std::string& trace, int64_t seq, const std::function<void(Json&)>& edit) {
  auto lines = lines_of(trace);
  for (auto& l : lines) {
    auto j = Json::parse(l);
    if (!j.ok() || !j->find("seq") || j->find("seq")->as_int() != seq) continue;
    Json e = *j;
    edit(e);
    l = e.dump();
  }
  return join_lines(lines);
}

TEST(Replay, GoldenTracesReplayIdentically) {
  for (const char* name : {"unit_convert", "ticket_triage", "organize_files"}) {
    // From another directory: the trace names its workflow relative to itself.
    Outcome o = run_dloop("replay " + kGolden + name + ".trace.jsonl");
    EXPECT_EQ(o.code, 0) << name << "\n" << o.out << o.err;
    EXPECT_NE(o.out.find(": identical ("), std::string::npos) << o.out;
  }
  Outcome o = run_dloop("replay " + kGolden + "unit_convert.trace.jsonl");
  EXPECT_NE(o.out.find("3 model outputs and 5 tool results from the record, run completed"), std::string::npos)
      << o.out;
}

TEST(Replay, ExportImportReplayRoundTrip) {
  auto dir = fresh_dir("roundtrip");
  const std::string golden = kGolden + "ticket_triage.trace.jsonl";
  const std::string db = (dir / "a.db").string();
  Outcome imp = run_dloop("trace import " + golden + " --db " + db);
  ASSERT_EQ(imp.code, 0) << imp.err;
  const std::string id = imp.out.substr(0, imp.out.find('\n'));
  EXPECT_EQ(id.rfind("r-", 0), 0u) << imp.out;
  // Export of the import is the file itself, byte for byte.
  Outcome exp = run_dloop("trace export " + id + " --db " + db);
  ASSERT_EQ(exp.code, 0) << exp.err;
  EXPECT_EQ(exp.out, slurp(golden));
  // The imported run replays from the database (its workflow given explicitly).
  Outcome rep = run_dloop("replay " + id + " --db " + db + " --workflow " + kGolden + "ticket_triage.yaml");
  EXPECT_EQ(rep.code, 0) << rep.out << rep.err;
  EXPECT_NE(rep.out.find("replay of run " + id + ": identical"), std::string::npos) << rep.out;
  // A run recorded here (tool steps only, no model) round-trips too.
  write(dir / "flow.yaml", R"(name: tools-only
inputs: {n: {type: integer, default: 3}}
tools: [{use: calculator}]
steps:
  - id: double
    tool: calculator
    args: {expression: "${{ inputs.n }} * 2"}
  - id: each
    for_each: [1, 2]
    as: k
    steps:
      - id: add
        tool: calculator
        args: {expression: "${{ k }} + ${{ steps.double.output.result }}"}
outputs: {sums: "${{ steps.each.output }}"}
)");
  Outcome run = run_dloop("run " + (dir / "flow.yaml").string() + " --db " + db);
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string rid = run_id_from(run.err);
  ASSERT_EQ(run_dloop("trace export " + rid + " --db " + db + " -o " + (dir / "t.jsonl").string()).code, 0);
  Outcome imp2 = run_dloop("trace import " + (dir / "t.jsonl").string() + " --db " + (dir / "b.db").string());
  ASSERT_EQ(imp2.code, 0) << imp2.err;
  Outcome rep2 = run_dloop("replay " + rid + " --db " + (dir / "b.db").string());
  EXPECT_EQ(rep2.code, 0) << rep2.out << rep2.err;
  EXPECT_NE(rep2.out.find("identical (4 step attempts, 0 model outputs and 3 tool results"), std::string::npos)
      << rep2.out;
}

TEST(Replay, EditedTraceGivesThePreciseDivergence) {
  auto dir = fresh_dir("divergence");
  const std::string golden = slurp(kGolden + "unit_convert.trace.jsonl");
  std::filesystem::copy_file(kGolden + "unit_convert.yaml", dir / "unit_convert.yaml");
  // The model's first call (seq 13) now asks for a different expression: the replay serves that
  // output, and the tool call it leads to is not the recorded one.
  write(dir / "model.jsonl", edit_event(golden, 13, [](Json& e) {
          e.find("payload")->find("output")->find("arguments")->set("expression", "12 / 1.6");
        }));
  Outcome o = run_dloop("replay " + (dir / "model.jsonl").string());
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  auto events = lines_of(golden);
  auto recorded_call = Json::parse(events[14]);  // seq 14: the recorded tool_call
  ASSERT_TRUE(recorded_call.ok());
  const std::string recorded_expr = recorded_call->find("payload")->find("arguments")->find("expression")->dump();
  EXPECT_EQ(o.out, "replay of run r-20261202-174017-1e18fbf5: diverged\n"
                   "divergence at step 'ask_model' (attempt 1, turn 1): tool call differs at arguments.expression\n"
                   "  expected: " + recorded_expr + "\n"
                   "  got:      \"12 / 1.6\"\n");
  // A recorded step output that the workflow no longer produces.
  write(dir / "output.jsonl", edit_event(golden, 7, [](Json& e) {
          e.find("payload")->find("output")->set("result", 7.5);
        }));
  o = run_dloop("replay " + (dir / "output.jsonl").string());
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.out.find("divergence at step 'convert' (attempt 1): step output differs at output.result\n"
                       "  expected: 7.5\n  got:      7.456454306848007\n"),
            std::string::npos)
      << o.out;
  // The workflow changed: its prompt is not the one the model was asked.
  std::string flow = slurp(kGolden + "unit_convert.yaml");
  flow.replace(flow.find("(1 mi = 1.609344 km)"), 20, "please");
  write(dir / "changed.yaml", flow);
  o = run_dloop("replay " + kGolden + "unit_convert.trace.jsonl --workflow " + (dir / "changed.yaml").string());
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.out.find("divergence at step 'ask_model' (attempt 1, turn 1): model request differs at "
                       "messages[1].content\n  expected: \"Convert 12 km to mi (1 mi = 1.609344 km).\"\n"
                       "  got:      \"Convert 12 km to mi please.\"\n"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.err.find("changed since the run was recorded"), std::string::npos) << o.err;
  // A step removed from the workflow: the record has events the replay never reaches.
  std::string shorter = slurp(kGolden + "unit_convert.yaml");
  const size_t round_at = shorter.find("  - id: round");
  const size_t ask_at = shorter.find("  - id: ask_model");
  shorter.erase(round_at, ask_at - round_at);
  shorter.replace(shorter.find("default(steps.round.output.result, steps.convert.output.result)"), 63,
                  "steps.convert.output.result");
  write(dir / "shorter.yaml", shorter);
  o = run_dloop("replay " + kGolden + "unit_convert.trace.jsonl --workflow " + (dir / "shorter.yaml").string());
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.out.find("divergence at step 'round' (attempt 1): recorded step_started never reached\n"
                       "  expected: step_started (seq 8)\n"),
            std::string::npos)
      << o.out;
}

TEST(Replay, TruncatedAndMalformedTracesNameTheLine) {
  auto dir = fresh_dir("malformed");
  const std::string golden = slurp(kGolden + "unit_convert.trace.jsonl");
  auto lines = lines_of(golden);
  // Cut inside line 11.
  write(dir / "cut.jsonl", join_lines({lines.begin(), lines.begin() + 10}) + lines[10].substr(0, 40));
  Outcome o = run_dloop("trace import " + (dir / "cut.jsonl").string() + " --db " + (dir / "x.db").string());
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("cut.jsonl:11: not valid JSON"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("(the file may be truncated)"), std::string::npos) << o.err;
  // Cut at a line boundary: the header's count catches it.
  write(dir / "short.jsonl", join_lines({lines.begin(), lines.begin() + 10}));
  o = run_dloop("replay " + (dir / "short.jsonl").string());
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("short.jsonl: truncated: the header announces 23 events, the file has 9 (it ends at line 10)"),
            std::string::npos)
      << o.err;
  // Garbage on line 5, a missing field on line 6, a gap in seq on line 7.
  auto bad = lines;
  bad[4] = "{\"seq\": 4, \"type\": ";
  write(dir / "bad5.jsonl", join_lines(bad));
  o = run_dloop("trace import " + (dir / "bad5.jsonl").string() + " --db " + (dir / "x.db").string());
  EXPECT_NE(o.err.find("bad5.jsonl:5: not valid JSON"), std::string::npos) << o.err;
  bad = lines;
  bad[5] = edit_event(lines[5], 5, [](Json& e) { e.as_object().erase(e.as_object().begin() + 1); });
  bad[5].pop_back();
  write(dir / "bad6.jsonl", join_lines(bad));
  o = run_dloop("trace import " + (dir / "bad6.jsonl").string() + " --db " + (dir / "x.db").string());
  EXPECT_NE(o.err.find("bad6.jsonl:6: field 'type' is missing"), std::string::npos) << o.err;
  bad = lines;
  bad.erase(bad.begin() + 6);
  write(dir / "gap.jsonl", join_lines(bad));
  o = run_dloop("trace import " + (dir / "gap.jsonl").string() + " --db " + (dir / "x.db").string());
  EXPECT_NE(o.err.find("gap.jsonl:7: event seq 7 where 6 was expected"), std::string::npos) << o.err;
  // None of them wrote anything.
  auto store = memory::Store::open((dir / "x.db").string());
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE((*store)->list_runs()->empty());
  o = run_dloop("replay " + (dir / "nothing.jsonl").string() + " --db " + (dir / "x.db").string());
  EXPECT_EQ(o.code, 2);
}

TEST(Replay, ImportTwice) {
  auto dir = fresh_dir("import_twice");
  const std::string golden = kGolden + "unit_convert.trace.jsonl";
  const std::string db = (dir / "s.db").string();
  ASSERT_EQ(run_dloop("trace import " + golden + " --db " + db).code, 0);
  Outcome again = run_dloop("trace import " + golden + " --db " + db);
  EXPECT_EQ(again.code, 0);
  EXPECT_NE(again.err.find("already in " + db + " with the same 23 events; nothing imported"), std::string::npos)
      << again.err;
  write(dir / "other.jsonl", edit_event(slurp(golden), 23, [](Json& e) {
          e.find("payload")->find("outputs")->set("value", 13);
        }));
  Outcome other = run_dloop("trace import " + (dir / "other.jsonl").string() + " --db " + db);
  EXPECT_EQ(other.code, 1);
  EXPECT_NE(other.err.find("already has a different run with id 'r-20261202-174017-1e18fbf5'"), std::string::npos)
      << other.err;
  Outcome renamed = run_dloop("trace import " + (dir / "other.jsonl").string() + " --db " + db + " --id copy-1");
  EXPECT_EQ(renamed.code, 0) << renamed.err;
  auto store = open_db(db);
  auto runs = store->list_runs();
  ASSERT_EQ(runs->size(), 2u);
  auto copy = store->get_run("copy-1");
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(copy->status, memory::RunStatus::kCompleted);
  EXPECT_EQ(copy->outputs.find("value")->as_int(), 13);
  EXPECT_EQ(copy->last_seq, 23);
  auto steps = store->steps("copy-1");
  ASSERT_EQ(steps->size(), 4u);
  EXPECT_EQ(steps->at(3).step_path, "ask_model");
  EXPECT_EQ(steps->at(3).status, memory::StepStatus::kFailed);
  EXPECT_TRUE(store->check_integrity().ok());

  // runs diff: the two runs differ in one output only.
  Outcome diff = run_dloop("runs diff r-20261202-174017-1e18fbf5 copy-1 --db " + db + " --width 30");
  EXPECT_EQ(diff.code, 1) << diff.err;
  std::set<std::string> marked;
  for (const auto& l : lines_of(diff.out)) {
    if (!l.empty() && l[0] == '*') marked.insert(l.substr(2, l.find(' ', 2) - 2));
  }
  EXPECT_EQ(marked, (std::set<std::string>{"outputs"})) << diff.out;
  EXPECT_NE(diff.out.find("failed: no answer after max_turns (3) model calls\n"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("the runs differ (rows marked *)"), std::string::npos);
  Outcome same = run_dloop("runs diff copy-1 copy-1 --db " + db);
  EXPECT_EQ(same.code, 0);
  EXPECT_NE(same.out.find("the runs are the same"), std::string::npos);
  Outcome files = run_dloop("runs diff " + golden + " " + kGolden + "ticket_triage.trace.jsonl");
  EXPECT_EQ(files.code, 1);
  EXPECT_NE(files.out.find("\n* convert "), std::string::npos) << files.out;
}

TEST(Trace, OtlpSpansFollowTheGenAiConventions) {
  Outcome o = run_dloop("trace export " + kGolden + "unit_convert.trace.jsonl --format otlp-json");
  ASSERT_EQ(o.code, 0) << o.err;
  auto doc = Json::parse(o.out);
  ASSERT_TRUE(doc.ok()) << doc.status().to_string();
  const Json& spans =
      *doc->find("resourceSpans")->as_array()[0].find("scopeSpans")->as_array()[0].find("spans");
  std::map<std::string, int> names;
  std::map<std::string, std::string> parent_of, name_of;
  std::string trace_id;
  for (const Json& s : spans.as_array()) {
    names[s.find("name")->as_string()]++;
    const std::string id = s.find("spanId")->as_string();
    EXPECT_EQ(id.size(), 16u);
    if (trace_id.empty()) trace_id = s.find("traceId")->as_string();
    EXPECT_EQ(s.find("traceId")->as_string(), trace_id);
    name_of[id] = s.find("name")->as_string();
    if (s.find("parentSpanId")) parent_of[s.find("name")->as_string()] = s.find("parentSpanId")->as_string();
    std::map<std::string, Json> attrs;
    for (const Json& a : s.find("attributes")->as_array()) attrs[a.find("key")->as_string()] = *a.find("value");
    const std::string op = attrs.count("gen_ai.operation.name") ? attrs["gen_ai.operation.name"].find("stringValue")->as_string() : "";
    if (s.find("name")->as_string().rfind("chat ", 0) == 0) {
      EXPECT_EQ(op, "chat");
      EXPECT_EQ(attrs["gen_ai.provider.name"].find("stringValue")->as_string(), "dloop");
      EXPECT_TRUE(attrs.count("gen_ai.usage.input_tokens"));
      EXPECT_TRUE(attrs.count("gen_ai.input.messages"));
      EXPECT_TRUE(attrs.count("gen_ai.tool.definitions"));
    }
    if (s.find("name")->as_string() == "execute_tool calculator") {
      EXPECT_EQ(op, "execute_tool");
      EXPECT_EQ(attrs["gen_ai.tool.name"].find("stringValue")->as_string(), "calculator");
      EXPECT_TRUE(attrs.count("gen_ai.tool.call.arguments"));
    }
  }
  EXPECT_EQ(trace_id.size(), 32u);
  EXPECT_EQ(names["invoke_workflow unit-convert"], 1);
  EXPECT_EQ(names["invoke_agent ask_model"], 1);
  EXPECT_EQ(names["chat default.gguf"], 3);
  EXPECT_EQ(names["execute_tool calculator"], 5);  // 2 tool steps + 3 agent calls
  EXPECT_EQ(names["step convert"], 1);
  EXPECT_EQ(name_of[parent_of["chat default.gguf"]], "invoke_agent ask_model");
  EXPECT_EQ(name_of[parent_of["invoke_agent ask_model"]], "invoke_workflow unit-convert");
}

TEST(Trace, SecretsAreRedactedAndTheExportStillReplays) {
  auto dir = fresh_dir("secrets");
  write(dir / "flow.yaml", R"(name: secret-flow
env: [{name: DLOOP_TEST_TOKEN, secret: true}, DLOOP_TEST_PLAIN]
tools: [{use: calculator}]
steps:
  - id: greet
    set: {line: "token=${{ env.DLOOP_TEST_TOKEN }} plain=${{ env.DLOOP_TEST_PLAIN }}"}
  - id: calc
    tool: calculator
    args: {expression: "2 + 2"}
outputs: {line: "${{ steps.greet.output.line }}"}
)");
  const std::string db = (dir / "s.db").string();
  Outcome run = run_dloop("run " + (dir / "flow.yaml").string() + " --db " + db + " --json-events",
                          "DLOOP_TEST_TOKEN=hunter2-secret DLOOP_TEST_PLAIN=visible ");
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string id = run_id_from(run.err);
  // --json-events: every event as stored, from run_started (seq 1) on, each with its ts, redacted.
  EXPECT_EQ(run.err.find("hunter2-secret"), std::string::npos) << run.err;
  std::vector<Json> lines;
  for (const auto& line : base::split(run.err, '\n')) {
    if (auto j = Json::parse(line); j.ok() && j->is_object()) lines.push_back(*j);
  }
  ASSERT_GE(lines.size(), 4u) << run.err;
  EXPECT_EQ(lines[0].find("type")->as_string(), "run_started");
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].find("seq")->as_int(), static_cast<int64_t>(i + 1));
    EXPECT_FALSE(lines[i].find("ts")->as_string().empty()) << lines[i].dump();
  }
  EXPECT_EQ(lines.back().find("type")->as_string(), "run_completed");
  // `dloop runs show` (table and --json) and `runs list` redact like the exports.
  for (const std::string& cmd : {"runs show " + id, "runs show " + id + " --json", std::string("runs list --json")}) {
    Outcome shown = run_dloop(cmd + " --db " + db);
    ASSERT_EQ(shown.code, 0) << cmd << ": " << shown.err;
    EXPECT_EQ(shown.out.find("hunter2-secret"), std::string::npos) << cmd << ": " << shown.out;
  }
  EXPECT_NE(run_dloop("runs show " + id + " --db " + db).out.find("token=[REDACTED:DLOOP_TEST_TOKEN]"), std::string::npos);
  for (const char* format : {"jsonl", "otlp-json"}) {
    Outcome exp = run_dloop("trace export " + id + " --db " + db + " --format " + format);
    ASSERT_EQ(exp.code, 0) << exp.err;
    EXPECT_EQ(exp.out.find("hunter2-secret"), std::string::npos) << format;
    EXPECT_NE(exp.out.find("token=[REDACTED:DLOOP_TEST_TOKEN] plain=visible"), std::string::npos) << format;
  }
  ASSERT_EQ(run_dloop("trace export " + id + " --db " + db + " -o " + (dir / "t.jsonl").string()).code, 0);
  // Replay takes env from the record: the redacted value renders the redacted text again.
  Outcome rep = run_dloop("replay " + (dir / "t.jsonl").string(), "DLOOP_TEST_TOKEN=other ");
  EXPECT_EQ(rep.code, 0) << rep.out << rep.err;
  // The local database keeps the real value, so a local replay sees it too.
  Outcome local = run_dloop("replay " + id + " --db " + db);
  EXPECT_EQ(local.code, 0) << local.out << local.err;
}

TEST(Replay, UsageErrors) {
  EXPECT_EQ(run_dloop("replay --help").code, 0);
  EXPECT_EQ(run_dloop("trace export --help").code, 0);
  EXPECT_EQ(run_dloop("trace import --help").code, 0);
  EXPECT_EQ(run_dloop("runs diff --help").code, 0);
  Outcome o = run_dloop("trace exprt x");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("did you mean 'export'"), std::string::npos);
  o = run_dloop("trace export " + kGolden + "unit_convert.trace.jsonl --format xml");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--format must be jsonl or otlp-json"), std::string::npos);
  o = run_dloop("replay " + kGolden + "unit_convert.trace.jsonl --model x.gguf");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--model and --reasoning need --live-model"), std::string::npos);
}

}  // namespace
}  // namespace dloop::test
