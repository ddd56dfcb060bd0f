// `dloop eval` on the bundled model: the report counts the turns it was given, splits them into
// call and answer turns as the data file does, and bad data or flags are usage errors that name
// the line or the flag.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "../common/run_command.h"
#include "dloop/base/json.h"

namespace {

using dloop::base::Json;

dloop::test::Outcome dloop_cmd(const std::string& args) {
  return dloop::test::run_command(std::string(DLOOP_BINARY) + " " + args);
}

const std::string kHeldout = std::string(DLOOP_SOURCE_DIR) + "/tests/data/toolcall/heldout.jsonl";

TEST(Eval, ReportsCountsOfTheGivenTurns) {
  // How many of the first 6 turns are calls, read from the file itself.
  std::ifstream in(kHeldout);
  std::string line;
  int calls = 0;
  for (int i = 0; i < 6 && std::getline(in, line); ++i) calls += line.find("\"gold\": {\"tool_call\"") != std::string::npos;
  auto o = dloop_cmd("eval --limit 6 --effort instant --no-free --threads 1 --json");
  ASSERT_EQ(o.code, 0) << o.err;
  auto j = Json::parse(o.out);
  ASSERT_TRUE(j.ok()) << o.out;
  EXPECT_EQ(j->find("turns")->as_int(), 6);
  const auto& results = j->find("results")->as_array();
  ASSERT_EQ(results.size(), 1u);
  const Json& r = results[0];
  EXPECT_EQ(r.find("method")->as_string(), "schema-guided-instant");
  EXPECT_EQ(r.find("turns")->as_int(), 6);
  EXPECT_EQ(r.find("call_turns")->as_int(), calls);
  EXPECT_EQ(r.find("answer_turns")->as_int(), 6 - calls);
  for (const char* k : {"stop_decision", "tool_choice", "args_exact", "valid"}) {
    const double v = r.find(k)->as_double();
    EXPECT_GE(v, 0.0) << k;
    EXPECT_LE(v, 1.0) << k;
  }
  // Schema-guided calls always validate against the chosen tool: valid >= tool choice.
  EXPECT_GE(r.find("valid")->as_double(), r.find("args_exact")->as_double());
  EXPECT_GT(r.find("median_forward_passes")->as_double(), 0.0);
}

// Line n (from 1) of the held-out file alone in a data file; empty when the line lacks `must`
// (the file changed: the test's premise is gone).
std::string heldout_line_file(int n, const std::string& must) {
  std::ifstream in(kHeldout);
  std::string line;
  for (int i = 0; i < n && std::getline(in, line);) ++i;
  if (line.find(must) == std::string::npos) return "";
  const std::string data = ::testing::TempDir() + "/eval_line" + std::to_string(n) + ".jsonl";
  std::ofstream(data) << line << "\n";
  return data;
}

// args_exact of `dloop eval --effort low` on a one-call data file (the right tool asserted), and
// the row's method name.
double one_call_args_exact(const std::string& data, const std::string& flags, std::string* method = nullptr) {
  auto o = dloop_cmd("eval --data " + data + " --effort low --no-free --threads 1 --json " + flags);
  EXPECT_EQ(o.code, 0) << o.err;
  auto j = Json::parse(o.out);
  if (!j.ok()) return -1.0;
  const Json& r = j->find("results")->as_array()[0];
  if (method) *method = r.find("method")->as_string();
  EXPECT_EQ(r.find("tool_choice")->as_double(), 1.0) << o.out;
  return r.find("args_exact")->as_double();
}

// Line 79 of the held-out file asks to archive a password for lars.khan@acme.io: the bundled
// model, decoding freely within the slot, slips on the address ("lars..io"); grounded, each
// position may only continue a span of the conversation, and the address comes out exact.
// (Model-dependent: a retrained default model must be checked against this line again.)
TEST(Eval, GroundedValuesCopyWhatTheModelSlipsOn) {
  const std::string data = heldout_line_file(79, "lars.khan@acme.io");
  ASSERT_FALSE(data.empty());
  std::string plain_method, grounded_method;
  // Without copy repair: its stated values mend the address too (the test below).
  EXPECT_EQ(one_call_args_exact(data, "--no-copy-repair", &plain_method), 0.0);
  EXPECT_EQ(one_call_args_exact(data, "--ground --no-copy-repair", &grounded_method), 1.0);
  EXPECT_EQ(plain_method, "schema-guided-low");
  EXPECT_EQ(grounded_method, "grounded-low");
}

// Line 95 of the held-out file: "book the train ticket date: 2029-05-12, order id set to
// USR-85003". Infilling puts each value under the other key; the key check (masking the keys and
// scoring them under each assignment of the two values) puts them back. (Model-dependent, as above.)
TEST(Eval, TheKeyCheckPutsSwappedValuesBack) {
  const std::string data = heldout_line_file(95, "order id set to USR-85003");
  ASSERT_FALSE(data.empty());
  EXPECT_EQ(one_call_args_exact(data, "--no-key-check"), 0.0);
  EXPECT_EQ(one_call_args_exact(data, ""), 1.0);
}

// Held-out line 72, grounded: infilling writes the order id under city too; the duplicate check
// gives city the span the model reads best ("Brisbane") and the call comes out exact.
// (Model-dependent, like the two tests above.)
TEST(Eval, TheDuplicateCheckReplacesARepeatedValue) {
  const std::string data = heldout_line_file(72, "city Brisbane");
  ASSERT_FALSE(data.empty());
  // Without copy repair, whose stated values would replace the repeat first.
  EXPECT_EQ(one_call_args_exact(data, "--ground --no-duplicate-check --no-copy-repair"), 0.0);
  EXPECT_EQ(one_call_args_exact(data, "--ground --no-copy-repair"), 1.0);
}

// Held-out line 44: "delete a weather forecast guests 90, where order id is CRT-84944". Without the
// mention prior the model closes the arguments after the order id and leaves the optional guests
// out; with it (the default, log 9), guests is written, and 90 with it. (Model-dependent, as above.)
TEST(Eval, TheMentionPriorWritesAnOptionalArgumentTheRequestNames) {
  const std::string data = heldout_line_file(44, "guests 90");
  ASSERT_FALSE(data.empty());
  // Without copy repair, whose stated arguments would add guests after the fact.
  EXPECT_EQ(one_call_args_exact(data, "--mention-prior 0 --no-copy-repair"), 0.0);
  EXPECT_EQ(one_call_args_exact(data, "--no-copy-repair"), 1.0);
  EXPECT_EQ(one_call_args_exact(data, "--mention-prior 2.2 --no-copy-repair"), 1.0);
  EXPECT_EQ(one_call_args_exact(data, "--mention-prior 0"), 1.0);
}

// Held-out line 181: "verify printer with full name Vikram Fontaine, using birthday ...". The bundled
// model closes the name after "Vikram"; copy repair completes it to the capitalised name it begins.
// Line 224: "send my review with overwrite enabled, items: 31, then ...": the model writes 31 eight
// times; copy repair cuts the array after the one 31 the request holds. (Model-dependent, as above.)
// Held-out line n (holding `must`) alone: exact with copy repair, not without.
void expect_copy_repair_mends(int n, const std::string& must) {
  const std::string data = heldout_line_file(n, must);
  ASSERT_FALSE(data.empty()) << "line " << n;
  EXPECT_EQ(one_call_args_exact(data, "--no-copy-repair"), 0.0) << "line " << n;
  EXPECT_EQ(one_call_args_exact(data, ""), 1.0) << "line " << n;
}

TEST(Eval, CopyRepairCompletesANameAndCutsAnArraysOverrun) {
  expect_copy_repair_mends(181, "Vikram Fontaine");
  expect_copy_repair_mends(224, "items: 31,");
}

// What the request states outright (docs/tool-calls.md "Copy repair": stated values, call
// scope, stated arguments), on the bundled model, each line alone: exact with copy repair, not
// without. (Model-dependent, like the tests above.)
TEST(Eval, StatedValuesAndTheCallScopeReadWhatTheRequestSays) {
  // "full name Una Carvalho": the model garbles the name; the value stated after the key's name
  // replaces it.
  expect_copy_repair_mends(28, "with full name Una Carvalho");
  // "limit 1498" is the next action's: the optional argument the model adds is dropped.
  expect_copy_repair_mends(58, "and afterwards show me my contact using limit 1498");
  // "with city Beijing": the optional argument the model leaves out is added.
  expect_copy_repair_mends(213, "with city Beijing");
  // "employee: Tomas Mansour and using rating 211.9": the model's copy runs on into "and".
  expect_copy_repair_mends(134, "employee: Tomas Mansour and using");
  // "for city Yerevan": the model writes "YI", no copy at all.
  expect_copy_repair_mends(262, "for city Yerevan");
  // "date set to 2030-10-13" in the request, `"date": "2027-12-27"` in a tool result: the
  // request's statement wins.
  expect_copy_repair_mends(239, "share the contact date set to 2030-10-13");
}

// Stated lists (docs/tool-calls.md "Copy repair"): the list the request states right after an
// array's key name replaces what the model wrote (`["red and", "daisy"]`, `["secret and
// morning"]`). (Model-dependent, as above.)
TEST(Eval, StatedListsReadTheListAfterTheKeysName) {
  expect_copy_repair_mends(18, "attendees: galaxy, red and daisy");
  expect_copy_repair_mends(133, "keywords: secret and morning");
  // "with categories warm, with content": the list ends before the linking word.
  expect_copy_repair_mends(59, "with categories warm, with content");
}

// Stated literals, quoted values and repeats of an array's item (docs/tool-calls.md "Copy
// repair"). (Model-dependent, as above.)
TEST(Eval, StatedLiteralsAndQuotedValuesWin) {
  // "set verbose to true": the model writes false; "turning verbose on": the model leaves it out.
  expect_copy_repair_mends(243, "set verbose to true");
  expect_copy_repair_mends(153, "turning verbose on");
  // `content "shared"`: the model copies a tool result's id instead.
  expect_copy_repair_mends(105, "show all weather forecast with content");
  // "city: Jakarta": the model writes "red", an item of the attendees list.
  expect_copy_repair_mends(242, "city: Jakarta, time set to 20:50");
}

// Held-out line 211: "remove the fuel price email amara.fischer@acme.io, city Beijing". Infilling
// gets the call right; the key check's model scoring swaps the two values; stated keys read the
// assignment from the request instead ("email" right before the address) and keep it.
// (Model-dependent, as above.)
TEST(Eval, StatedKeysKeepWhatTheRequestSays) {
  const std::string data = heldout_line_file(211, "email amara.fischer@acme.io, city Beijing");
  ASSERT_FALSE(data.empty());
  EXPECT_EQ(one_call_args_exact(data, "--no-stated-keys"), 0.0);
  EXPECT_EQ(one_call_args_exact(data, "--no-key-check"), 1.0);
  EXPECT_EQ(one_call_args_exact(data, ""), 1.0);
}

TEST(Eval, ABadMentionPriorIsAUsageError) {
  for (const char* bad : {"-1", "nan", "101", "x"}) {
    auto o = dloop_cmd(std::string("eval --limit 1 --no-free --mention-prior ") + bad);
    EXPECT_EQ(o.code, 2) << bad;
    EXPECT_NE(o.err.find("--mention-prior"), std::string::npos) << o.err;
  }
}

TEST(Eval, MalformedDataNamesTheLine) {
  const std::string path = testing::TempDir() + "/eval_bad.jsonl";
  {
    std::ifstream in(kHeldout);
    std::string first;
    std::getline(in, first);
    std::ofstream out(path);
    out << first << "\n" << R"({"messages": [], "tools": [], "gold": {"tool_call": {"name": "x"}}})" << "\n";
  }
  auto o = dloop_cmd("eval --no-free --data " + path);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find(path + ":2: 'gold.tool_call' needs 'name' and 'arguments'"), std::string::npos) << o.err;
  {
    std::ofstream out(path);
    out << "{\"messages\": [\n";
  }
  o = dloop_cmd("eval --no-free --data " + path);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find(path + ":1:"), std::string::npos) << o.err;
}

// A turn the model cannot decode (here a request longer than the bundled model's 1,024-token
// context) is reported with its line and counted as an error and a miss on every figure; the
// other turns are still measured.
TEST(Eval, ATurnThatFailsIsCountedAndTheRunGoesOn) {
  std::ifstream in(kHeldout);
  std::string first;
  std::getline(in, first);
  ASSERT_NE(first.find("\"gold\": {\"tool_call\""), std::string::npos) << first;
  auto turn = Json::parse(first);
  ASSERT_TRUE(turn.ok());
  std::string request = "Please restore the door lock.";
  for (int i = 0; i < 1500; ++i) request += " please";
  Json long_turn = *turn;
  Json messages = Json::array();
  messages.push_back(Json::object({{"role", "user"}, {"content", request}}));
  long_turn.set("messages", std::move(messages));
  const std::string path = testing::TempDir() + "/eval_too_long.jsonl";
  std::ofstream(path) << first << "\n" << long_turn.dump() << "\n";
  auto o = dloop_cmd("eval --no-free --effort low --threads 1 --json --data " + path);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.err.find("schema-guided-low line 2: error: "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("context length 1024"), std::string::npos) << o.err;
  auto j = Json::parse(o.out);
  ASSERT_TRUE(j.ok()) << o.out;
  const Json& r = j->find("results")->as_array()[0];
  EXPECT_EQ(r.find("turns")->as_int(), 2);
  EXPECT_EQ(r.find("call_turns")->as_int(), 2);
  EXPECT_EQ(r.find("errors")->as_int(), 1);
  EXPECT_LE(r.find("stop_decision")->as_double(), 0.5);  // the failed turn is a miss
  EXPECT_LE(r.find("valid")->as_double(), 0.5);
  // Only failing turns: nothing was measured, exit 1.
  std::ofstream(path) << long_turn.dump() << "\n";
  o = dloop_cmd("eval --no-free --effort low --threads 1 --data " + path);
  EXPECT_EQ(o.code, 1) << o.out;
  EXPECT_NE(o.out.find("errors"), std::string::npos) << o.out;
}

TEST(Eval, BadFlagsAreUsageErrors) {
  auto o = dloop_cmd("eval --effort extreme");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("unknown effort 'extreme'"), std::string::npos) << o.err;
  o = dloop_cmd("eval --limit 0");
  EXPECT_EQ(o.code, 2);
  o = dloop_cmd("eval --data /nonexistent/turns.jsonl");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("/nonexistent/turns.jsonl: cannot open"), std::string::npos) << o.err;
  o = dloop_cmd("eval --cache warm");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--cache: unknown mode 'warm'"), std::string::npos) << o.err;
  o = dloop_cmd("eval --reuse everything");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--reuse: unknown mode 'everything'"), std::string::npos) << o.err;
}

}  // namespace
