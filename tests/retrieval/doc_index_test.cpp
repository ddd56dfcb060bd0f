// DocIndex on a real SQLite database: ingest, re-ingest of changed/unchanged/deleted files,
// skipped binaries, BM25 ranking that returns the right file, citations that match the lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "dloop/memory/doc_index.h"
#include "dloop/memory/store.h"

namespace dloop::memory {
namespace {

namespace fs = std::filesystem;

class DocIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dloop-index-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "docs");
    old_cwd_ = fs::current_path();
    fs::current_path(dir_);  // stored paths are relative to the current directory
  }
  void TearDown() override {
    fs::current_path(old_cwd_);
    fs::remove_all(dir_);
  }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel, std::ios::binary) << text;
  }
  std::unique_ptr<DocIndex> open() {
    auto idx = DocIndex::open((dir_ / "state.db").string());
    EXPECT_TRUE(idx.ok()) << idx.status().to_string();
    return std::move(idx).value();
  }

  fs::path dir_, old_cwd_;
};

TEST_F(DocIndexTest, ReingestTouchesOnlyWhatChanged) {
  write("docs/cooking.md", "# Cooking\nBoil the pasta for nine minutes.\nSalt the water generously.\n");
  write("docs/garden.md", "# Garden\nWater tomatoes every morning.\nPrune the roses in March.\n");
  write("docs/engines.txt", "The diesel engine needs a glow plug.\n");
  write("docs/.hidden/secret.md", "pasta pasta pasta\n");
  write("docs/image.bin", std::string("\x89PNG\0\0\x01", 7));
  auto idx = open();
  auto first = idx->add({"docs"});
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_EQ(first->added, 3);
  EXPECT_EQ(first->unchanged, 0);
  ASSERT_EQ(first->skipped.size(), 1u);
  EXPECT_EQ(first->skipped[0], "docs/image.bin: binary (contains NUL bytes)");

  auto again = idx->add({"docs"});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->added, 0);
  EXPECT_EQ(again->updated, 0);
  EXPECT_EQ(again->unchanged, 3);
  EXPECT_EQ(again->chunks, 0);

  write("docs/garden.md", "# Garden\nWater the cucumbers every evening.\n");
  fs::remove(dir_ / "docs/engines.txt");
  auto third = idx->add({"docs"});
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->updated, 1);
  EXPECT_EQ(third->unchanged, 1);
  EXPECT_EQ(third->removed, 1);
  auto files = idx->files();
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, "docs/cooking.md");
  EXPECT_EQ((*files)[1].path, "docs/garden.md");
  EXPECT_EQ((*files)[1].lines, 2);

  // The old garden text and the deleted file are gone from the full-text index too.
  auto tomatoes = idx->search("tomatoes", 5);
  ASSERT_TRUE(tomatoes.ok());
  EXPECT_TRUE(tomatoes->empty());
  auto diesel = idx->search("diesel glow plug", 5);
  ASSERT_TRUE(diesel.ok());
  EXPECT_TRUE(diesel->empty());
  auto cucumbers = idx->search("cucumbers", 5);
  ASSERT_TRUE(cucumbers.ok());
  ASSERT_EQ(cucumbers->size(), 1u);
  EXPECT_EQ((*cucumbers)[0].path, "docs/garden.md");
  EXPECT_EQ((*cucumbers)[0].best_line, 2);
}

TEST_F(DocIndexTest, RankingFindsTheRightFileAndLine) {
  std::string long_doc;
  for (int i = 1; i <= 60; ++i) long_doc += "filler sentence number " + std::to_string(i) + " about nothing much\n";
  long_doc += "The retry backoff doubles after each failed attempt.\n";
  write("docs/filler.md", long_doc);
  write("docs/retry.md", "# Retries\nA step may set retry.\n\nThe default backoff is one second.\n");
  write("docs/other.md", "# Other\nBackoff appears once here.\nAnd default appears here, far away.\n");
  auto idx = open();
  ASSERT_TRUE(idx->add({"docs"}).ok());
  auto hits = idx->search("What is the default retry backoff?", 3);
  ASSERT_TRUE(hits.ok()) << hits.status().to_string();
  ASSERT_GE(hits->size(), 2u);
  EXPECT_EQ((*hits)[0].path, "docs/retry.md");
  EXPECT_EQ((*hits)[0].best_line, 4);
  EXPECT_EQ((*hits)[0].best_text, "The default backoff is one second.");
  EXPECT_GT((*hits)[0].score, (*hits)[1].score);
  // The hit in the long file cites the chunk that holds line 61, and that line is in its text.
  auto doubles = idx->search("backoff doubles", 1);
  ASSERT_TRUE(doubles.ok());
  ASSERT_EQ(doubles->size(), 1u);
  EXPECT_EQ((*doubles)[0].path, "docs/filler.md");
  EXPECT_EQ((*doubles)[0].best_line, 61);
  EXPECT_LE((*doubles)[0].start_line, 61);
  EXPECT_GE((*doubles)[0].end_line, 61);
  EXPECT_NE((*doubles)[0].text.find("The retry backoff doubles"), std::string::npos);

  auto none = idx->search("the of a", 3);
  EXPECT_EQ(none.status().code(), base::Code::kInvalidArgument);
}

TEST_F(DocIndexTest, MissingPathsAndForeignDatabases) {
  auto idx = open();
  auto missing = idx->add({"nope"});
  EXPECT_EQ(missing.status().code(), base::Code::kNotFound);
  EXPECT_EQ(missing.status().message(), "nope: no such file or folder");
  write("notdb.db", "this is not a database at all, just text..............................................");
  auto bad = DocIndex::open((dir_ / "notdb.db").string());
  EXPECT_FALSE(bad.ok());
  // The index lives next to the run tables in the same state database.
  auto store = Store::open((dir_ / "state.db").string());
  ASSERT_TRUE(store.ok()) << store.status().to_string();
}

}  // namespace
}  // namespace dloop::memory
