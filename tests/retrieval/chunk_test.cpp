// chunk_text(): line ranges, overlap, byte caps, Markdown heading breaks; fts_query().
#include <gtest/gtest.h>

#include "dloop/memory/doc_index.h"

namespace dloop::memory {
namespace {

std::string numbered(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

TEST(Chunk, LineRangesWithOverlap) {
  ChunkOptions o;
  o.max_lines = 10;
  o.overlap_lines = 3;
  auto chunks = chunk_text(numbered(25), false, o);
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(chunks[0].start_line, 1);
  EXPECT_EQ(chunks[0].end_line, 10);
  EXPECT_EQ(chunks[1].start_line, 8);  // 3 lines of overlap
  EXPECT_EQ(chunks[1].end_line, 17);
  EXPECT_EQ(chunks[2].start_line, 15);
  EXPECT_EQ(chunks[2].end_line, 24);
  EXPECT_EQ(chunks[3].start_line, 22);
  EXPECT_EQ(chunks[3].end_line, 25);
  EXPECT_EQ(chunks[1].text.substr(0, 7), "line 8\n");
  EXPECT_EQ(chunks[3].text, "line 22\nline 23\nline 24\nline 25");
}

TEST(Chunk, ByteCapAndLongLines) {
  ChunkOptions o;
  o.max_lines = 100;
  o.max_bytes = 20;
  o.overlap_lines = 0;
  auto chunks = chunk_text("aaaaaaaa\nbbbbbbbb\ncccccccc\n" + std::string(50, 'x') + "\nd\n", false, o);
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(chunks[0].text, "aaaaaaaa\nbbbbbbbb");  // 18 bytes; a third line would pass 20
  EXPECT_EQ(chunks[1].start_line, 3);
  EXPECT_EQ(chunks[2].start_line, 4);  // a line longer than the cap is a chunk of its own
  EXPECT_EQ(chunks[2].end_line, 4);
  EXPECT_EQ(chunks[3].text, "d");
}

TEST(Chunk, MarkdownHeadingsStartChunksAndBlankChunksAreDropped) {
  const std::string md = "# Title\nintro one\nintro two\n\n## Install\nstep one\n## Tiny\nx\n\n\n\n";
  auto chunks = chunk_text(md, true, {});
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].start_line, 1);
  EXPECT_EQ(chunks[0].end_line, 4);
  EXPECT_EQ(chunks[1].start_line, 5);  // "## Install": no overlap across sections
  // "## Tiny" follows a section of only 2 lines: it stays in the same chunk.
  EXPECT_EQ(chunks[1].end_line, 11);
  auto plain = chunk_text(md, false, {});
  EXPECT_EQ(plain.size(), 1u);
  EXPECT_TRUE(chunk_text("\n\n  \n", false, {}).empty());
}

TEST(Chunk, FtsQueryQuotesWordsAndDropsStopWords) {
  EXPECT_EQ(fts_query("What is the default max_turns?"), "\"default\" OR \"max_turns\"");
  EXPECT_EQ(fts_query("\"quoted\" OR NOT x*"), "\"quoted\" OR \"not\" OR \"x\"");
  EXPECT_EQ(fts_query("the of a"), "");
}

}  // namespace
}  // namespace dloop::memory
