// End to end: `dloop index add/search/list` on this repository's docs/, and the docs Q&A example
// (examples/docs_qa.yaml) answering offline with a citation whose line exists and holds the
// answer. The commands run from the source tree so the index stores paths like docs/cli.md.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../common/run_command.h"
#include "dloop/base/json.h"

namespace dloop::test {
namespace {

using base::Json;
namespace fs = std::filesystem;
const std::string kSrc = DLOOP_SOURCE_DIR;

fs::path fresh(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("dloop-retrieval-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string dloop(const std::string& args) { return "cd " + kSrc + " && " + DLOOP_BINARY + " " + args; }

std::string model() {
  std::string bundled = kSrc + "/models/default.gguf";
  return fs::exists(bundled) ? bundled : kSrc + "/tests/data/models/llada-f32.gguf";
}

// Line `n` (1-based) of a file in the source tree.
std::string line_of(const std::string& rel, int n) {
  std::ifstream in(kSrc + "/" + rel);
  std::string line;
  for (int i = 1; std::getline(in, line); ++i) {
    if (i == n) return line;
  }
  return "<no line " + std::to_string(n) + " in " + rel + ">";
}

TEST(IndexCli, AddSearchListAndReingest) {
  fs::path dir = fresh("cli");
  const std::string db = " --db " + (dir / "state.db").string();
  Outcome add = run_command(dloop("index add docs --json" + db));
  ASSERT_EQ(add.code, 0) << add.err;
  auto report = Json::parse(add.out);
  ASSERT_TRUE(report.ok()) << add.out;
  EXPECT_GT(report->find("added")->as_int(), 5);
  EXPECT_EQ(report->find("unchanged")->as_int(), 0);
  Outcome again = run_command(dloop("index add docs --json" + db));
  ASSERT_EQ(again.code, 0);
  auto second = Json::parse(again.out);
  EXPECT_EQ(second->find("added")->as_int(), 0);
  EXPECT_EQ(second->find("updated")->as_int(), 0);
  EXPECT_EQ(second->find("unchanged")->as_int(), report->find("added")->as_int());

  Outcome search = run_command(dloop("index search 'reasoning effort presets' -k 3 --json" + db));
  ASSERT_EQ(search.code, 0) << search.err;
  auto hits = Json::parse(search.out);
  ASSERT_TRUE(hits.ok()) << search.out;
  const auto& results = hits->find("results")->as_array();
  ASSERT_EQ(results.size(), 3u);
  for (const auto& h : results) {
    const std::string path = h.find("path")->as_string();
    const int best = static_cast<int>(h.find("best_line")->as_int());
    EXPECT_EQ(line_of(path, best), h.find("best_text")->as_string()) << path << ":" << best;
    EXPECT_LE(h.find("start_line")->as_int(), best);
    EXPECT_GE(h.find("end_line")->as_int(), best);
  }
  Outcome text = run_command(dloop("index search 'reasoning effort' " + db));
  ASSERT_EQ(text.code, 0);
  EXPECT_NE(text.out.find("score"), std::string::npos) << text.out;

  Outcome list = run_command(dloop("index list --json" + db));
  ASSERT_EQ(list.code, 0);
  EXPECT_NE(list.out.find("\"docs/cli.md\""), std::string::npos) << list.out;

  Outcome missing = run_command(dloop("index add no-such-folder" + db));
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("no-such-folder: no such file or folder"), std::string::npos) << missing.err;
  Outcome empty = run_command(dloop("index search 'the of' " + db));
  EXPECT_EQ(empty.code, 2);
  EXPECT_NE(empty.err.find("has no words to search for"), std::string::npos) << empty.err;
  fs::remove_all(dir);
}

TEST(DocsQaExample, AnswersWithACitationThatHoldsTheAnswer) {
  fs::path dir = fresh("qa");
  const std::string db = " --db " + (dir / "state.db").string();
  ASSERT_EQ(run_command(dloop("index add docs" + db)).code, 0);
  Outcome o = run_command(dloop("run examples/docs_qa.yaml --input question='What is the default max_turns of an "
                                "agent step?' --model " + model() + db));
  ASSERT_EQ(o.code, 0) << o.err;
  auto out = Json::parse(o.out);
  ASSERT_TRUE(out.ok()) << o.out;
  const std::string citation = out->find("citation")->as_string();
  const auto colon = citation.rfind(':');
  ASSERT_NE(colon, std::string::npos) << citation;
  const std::string path = citation.substr(0, colon);
  const int line = std::stoi(citation.substr(colon + 1));
  const std::string cited = line_of(path, line);
  EXPECT_EQ(cited, out->find("answer")->as_string());
  EXPECT_NE(cited.find("max_turns"), std::string::npos) << citation << ": " << cited;
  EXPECT_NE(cited.find("default 8"), std::string::npos) << citation << ": " << cited;
  // The model's attempt is recorded either way (it may fail on a random-weight test model).
  const std::string status = out->find("model_status")->as_string();
  EXPECT_TRUE(status == "succeeded" || status == "failed") << status;
  fs::remove_all(dir);
}

TEST(DocsQaExample, EmptyIndexSaysSo) {
  fs::path dir = fresh("qa-empty");
  Outcome o = run_command(dloop("run examples/docs_qa.yaml --input question='anything at all' --model " + model() +
                                " --db " + (dir / "state.db").string()));
  ASSERT_EQ(o.code, 0) << o.err;
  auto out = Json::parse(o.out);
  ASSERT_TRUE(out.ok()) << o.out;
  EXPECT_EQ(out->find("sources")->as_int(), 0);
  EXPECT_NE(out->find("answer")->as_string().find("dloop index add docs"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace dloop::test
