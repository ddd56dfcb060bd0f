// file_read / file_write / file_list: happy paths and every way out of the workspace (absolute
// paths, `..`, symbolic links to directories and files outside, dangling links) is refused.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test_util.h"

namespace dloop::tools {
namespace {

using namespace testing;

class FileTools : public ::testing::Test {
 protected:
  FileTools() {
    h.set_workspace(ws.path());
    ws.write("notes/a.txt", "hello\n");
    ws.write("notes/b.txt", "second");
    outside.write("secret.txt", "top secret");
  }
  Harness h;
  TempDir ws;       // the workspace
  TempDir outside;  // a directory the model must not reach
};

TEST_F(FileTools, ReadWriteListHappyPath) {
  auto read = builtin("file_read");
  ToolResult r = h.call(read, R"({"path": "notes/a.txt"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value(), J(R"({"path": "notes/a.txt", "size": 6, "offset": 0, "content": "hello\n", "truncated": false})"));

  auto write = builtin("file_write");
  ToolResult w = h.call(write, R"({"path": "out/new/report.md", "content": "# Report\n"})");
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w.value(), J(R"({"path": "out/new/report.md", "bytes_written": 9, "created": true})"));
  EXPECT_EQ(ws.read("out/new/report.md"), "# Report\n");
  ToolResult again = h.call(write, R"({"path": "out/new/report.md", "content": "more\n", "append": true})");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again.value().find("created"), Json(false));
  EXPECT_EQ(ws.read("out/new/report.md"), "# Report\nmore\n");
  ASSERT_TRUE(h.call(write, R"({"path": "./out/new/report.md", "content": "x"})").ok());
  EXPECT_EQ(ws.read("out/new/report.md"), "x");

  auto list = builtin("file_list");
  ToolResult l = h.call(list, R"({"path": "notes"})");
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l.value(), J(R"({"path": "notes", "entries": [{"name": "a.txt", "type": "file", "size": 6},
                                                       {"name": "b.txt", "type": "file", "size": 6}], "truncated": false})"));
  ToolResult all = h.call(list, R"({"recursive": true})");
  ASSERT_TRUE(all.ok());
  std::vector<std::string> names;
  for (const Json& e : all.value().find("entries")->as_array()) names.push_back(e.find("name")->as_string());
  EXPECT_EQ(names, (std::vector<std::string>{"notes", "notes/a.txt", "notes/b.txt", "out", "out/new", "out/new/report.md"}));
}

TEST_F(FileTools, AbsolutePathsAndDotDotAreRefused) {
  auto read = builtin("file_read");
  auto write = builtin("file_write");
  auto list = builtin("file_list");
  std::string secret = (outside / "secret.txt").string();
  EXPECT_TOOL_ERROR(h.call(read, R"({"path": ")" + secret + R"("})"), ToolErrorKind::kDenied, "absolute paths are not allowed");
  EXPECT_TOOL_ERROR(h.call(read, R"({"path": "/etc/passwd"})"), ToolErrorKind::kDenied, "absolute paths are not allowed");
  EXPECT_TOOL_ERROR(h.call(read, R"({"path": "../x"})"), ToolErrorKind::kDenied, "'..' is not allowed");
  EXPECT_TOOL_ERROR(h.call(read, R"({"path": "notes/../../x"})"), ToolErrorKind::kDenied, "'..' is not allowed");
  EXPECT_TOOL_ERROR(h.call(read, R"({"path": "notes/../a.txt"})"), ToolErrorKind::kDenied, "'..' is not allowed");
  EXPECT_TOOL_ERROR(h.call(write, R"({"path": "/tmp/evil", "content": ""})"), ToolErrorKind::kDenied, "absolute");
  EXPECT_TOOL_ERROR(h.call(write, R"({"path": "a/../../evil", "content": ""})"), ToolErrorKind::kDenied, "'..'");
  EXPECT_TOOL_ERROR(h.call(list, R"({"path": ".."})"), ToolErrorKind::kDenied, "'..'");
  EXPECT_TOOL_ERROR(h.call(list, R"({"path": "/"})"), ToolErrorKind::kDenied, "absolute");
  EXPECT_TOOL_ERROR(h.call(read, R"({"path": ""})"), ToolErrorKind::kInvalidArguments, "the path is empty");
}

TEST_F(FileTools, SymlinksOutOfTheWorkspaceAreRefused) {
  std::filesystem::create_directory_symlink(outside.path(), ws / "escape_dir");
  std::filesystem::create_symlink(outside / "secret.txt", ws / "escape_file");
  std::filesystem::create_symlink(outside / "missing.txt", ws / "dangling_out");
  std::filesystem::create_symlink("notes/a.txt", ws / "inside_link");
  auto read = builtin("file_read");
  auto write = builtin("file_write");
  auto list = builtin("file_list");
  EXPECT_TOOL_ERROR(h.call(read, R"({"path": "escape_dir/secret.txt"})"), ToolErrorKind::kDenied, "resolves outside the workspace");
  EXPECT_TOOL_ERROR(h.call(read, R"({"path": "escape_file"})"), ToolErrorKind::kDenied, "resolves outside the workspace");
  EXPECT_TOOL_ERROR(h.call(list, R"({"path": "escape_dir"})"), ToolErrorKind::kDenied, "resolves outside the workspace");
  EXPECT_TOOL_ERROR(h.call(write, R"({"path": "escape_dir/planted.txt", "content": "x"})"), ToolErrorKind::kDenied,
                    "resolves outside the workspace");
  EXPECT_TOOL_ERROR(h.call(write, R"({"path": "escape_file", "content": "overwritten"})"), ToolErrorKind::kDenied,
                    "resolves outside the workspace");
  EXPECT_TOOL_ERROR(h.call(write, R"({"path": "dangling_out", "content": "x"})"), ToolErrorKind::kDenied,
                    "symbolic link to a missing file");
  EXPECT_FALSE(std::filesystem::exists(outside / "planted.txt"));
  EXPECT_FALSE(std::filesystem::exists(outside / "missing.txt"));
  EXPECT_EQ(outside.read("secret.txt"), "top secret");
  // A link that stays inside is fine, and listing shows links without following them.
  ToolResult in = h.call(read, R"({"path": "inside_link"})");
  ASSERT_TRUE(in.ok()) << in.error().message;
  EXPECT_EQ(*in.value().find("content"), Json("hello\n"));
  ToolResult l = h.call(list, R"({"recursive": true})");
  ASSERT_TRUE(l.ok());
  bool saw_link = false;
  for (const Json& e : l.value().find("entries")->as_array()) {
    EXPECT_FALSE(contains(e.find("name")->as_string(), "secret")) << e.dump();
    if (e.find("name")->as_string() == "escape_dir") {
      saw_link = true;
      EXPECT_EQ(*e.find("type"), Json("symlink"));
    }
  }
  EXPECT_TRUE(saw_link);
}

TEST_F(FileTools, WorkspaceItselfBehindALinkIsFine) {
  // The root is resolved first, so a workspace reached through a link works normally.
  TempDir links;
  std::filesystem::create_directory_symlink(ws.path(), links / "ws");
  h.set_workspace(links / "ws");
  ToolResult r = h.call(builtin("file_read"), R"({"path": "notes/b.txt"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r.value().find("content"), Json("second"));
}

TEST_F(FileTools, ReadLimitsOffsetsAndNonText) {
  ws.write("big.txt", std::string(100, 'a') + "\xc3\xa9" + std::string(100, 'b'));
  auto read = builtin("file_read", R"({"max_bytes": 101})");
  ToolResult r = h.call(read, R"({"path": "big.txt"})");
  ASSERT_TRUE(r.ok());
  // Cut at 101 bytes would split the two-byte "é": the partial character is dropped.
  EXPECT_EQ(r.value().find("content")->as_string(), std::string(100, 'a'));
  EXPECT_EQ(*r.value().find("truncated"), Json(true));
  EXPECT_EQ(*r.value().find("size"), Json(202));
  ToolResult tail = h.call(read, R"({"path": "big.txt", "offset": 100, "length": 10})");
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail.value().find("content")->as_string(), "\xc3\xa9" + std::string(8, 'b'));
  ToolResult past = h.call(read, R"({"path": "big.txt", "offset": 5000})");
  ASSERT_TRUE(past.ok());
  EXPECT_EQ(*past.value().find("content"), Json(""));
  EXPECT_EQ(*past.value().find("truncated"), Json(false));

  ws.write("bin.dat", std::string("\x00\xff\xfe", 3));
  EXPECT_TOOL_ERROR(h.call(read, R"({"path": "bin.dat"})"), ToolErrorKind::kFailed, "is not UTF-8 text");
  EXPECT_TOOL_ERROR(h.call(read, R"({"path": "notes"})"), ToolErrorKind::kFailed, "is a directory (use file_list)");
  EXPECT_TOOL_ERROR(h.call(read, R"({"path": "nope.txt"})"), ToolErrorKind::kFailed, "no such file or directory: 'nope.txt'");
  ASSERT_EQ(::mkfifo((ws / "fifo").c_str(), 0644), 0);
  EXPECT_TOOL_ERROR(h.call(read, R"({"path": "fifo"})"), ToolErrorKind::kFailed, "not a regular file");  // and no hang
  EXPECT_TOOL_ERROR(h.call(read, R"({"path": "big.txt", "offset": -1})"), ToolErrorKind::kInvalidArguments, "#/offset");
}

TEST_F(FileTools, WriteOptions) {
  auto no_overwrite = builtin("file_write", R"({"overwrite": false})");
  EXPECT_TOOL_ERROR(h.call(no_overwrite, R"({"path": "notes/a.txt", "content": "x"})"), ToolErrorKind::kDenied,
                    "already exists and this tool does not overwrite files");
  EXPECT_EQ(ws.read("notes/a.txt"), "hello\n");
  ASSERT_TRUE(h.call(no_overwrite, R"({"path": "fresh.txt", "content": "x"})").ok());

  auto no_dirs = builtin("file_write", R"({"create_dirs": false})");
  EXPECT_TOOL_ERROR(h.call(no_dirs, R"({"path": "missing/x.txt", "content": "x"})"), ToolErrorKind::kFailed,
                    "directory 'missing' does not exist");

  auto small = builtin("file_write", R"({"max_bytes": 4})");
  EXPECT_TOOL_ERROR(h.call(small, R"({"path": "s.txt", "content": "12345"})"), ToolErrorKind::kDenied,
                    "the content is 5 bytes; this tool writes at most 4");
  auto write = builtin("file_write");
  EXPECT_TOOL_ERROR(h.call(write, R"({"path": "notes", "content": "x"})"), ToolErrorKind::kFailed, "is a directory");
  EXPECT_TOOL_ERROR(h.call(write, R"({"path": "notes/", "content": "x"})"), ToolErrorKind::kInvalidArguments,
                    "names a directory");
  EXPECT_TOOL_ERROR(h.call(write, R"({"path": "notes/a.txt/x", "content": "x"})"), ToolErrorKind::kFailed,
                    "'a.txt' is not a directory");
}

TEST_F(FileTools, RootOptionConfinesFurther) {
  auto read = builtin("file_read", R"({"root": "notes"})");
  ToolResult r = h.call(read, R"({"path": "a.txt"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r.value().find("content"), Json("hello\n"));
  EXPECT_TOOL_ERROR(h.call(read, R"({"path": "../notes/a.txt"})"), ToolErrorKind::kDenied, "'..'");
  auto bad_root = builtin("file_list", R"({"root": "does-not-exist"})");
  EXPECT_TOOL_ERROR(h.call(bad_root, "{}"), ToolErrorKind::kFailed, "is not accessible");
}

TEST_F(FileTools, ListCapAndConfigErrors) {
  for (int i = 0; i < 5; ++i) ws.write("many/f" + std::to_string(i), "x");
  auto list = builtin("file_list", R"({"max_entries": 3})");
  ToolResult l = h.call(list, R"({"path": "many"})");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l.value().find("entries")->size(), 3u);
  EXPECT_EQ(*l.value().find("truncated"), Json(true));
  EXPECT_TOOL_ERROR(h.call(list, R"({"path": "notes/a.txt"})"), ToolErrorKind::kFailed, "is not a directory");
  EXPECT_EQ(config_error("file_read", R"({"max_byte": 1})"),
            "file_read: unknown `with:` key 'max_byte' (did you mean 'max_bytes'?); allowed: root, max_bytes");
  EXPECT_EQ(config_error("file_write", R"({"overwrite": "yes"})"), "file_write: with.overwrite must be true or false");
  EXPECT_EQ(config_error("file_list", R"({"root": ""})"), "file_list: with.root must be a non-empty string");
}

// Issue 42: a hard link to a file outside the workspace was written through; now a file with more
// than one link is refused for writes (and left untouched).
TEST_F(FileTools, WritesToAFileWithOtherHardLinksAreRefused) {
  ASSERT_EQ(::link((outside.path() / "secret.txt").c_str(), (ws.path() / "linked.txt").c_str()), 0);
  auto write = builtin("file_write");
  EXPECT_TOOL_ERROR(h.call(write, R"({"path": "linked.txt", "content": "pwned"})"), ToolErrorKind::kDenied,
                    "hard links");
  EXPECT_TOOL_ERROR(h.call(write, R"({"path": "linked.txt", "content": "pwned", "append": true})"),
                    ToolErrorKind::kDenied, "hard links");
  EXPECT_EQ(outside.read("secret.txt"), "top secret");
}

// Issue 42: appends racing to create one file (a parallel loop) all succeed; none fails with
// "File exists" and every line lands.
TEST_F(FileTools, ParallelAppendsCreateTheFileTogether) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 20;
  std::atomic<int> failures{0};
  for (int round = 0; round < kRounds; ++round) {
    const std::string file = "race/" + std::to_string(round) + ".log";
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        Harness mine;
        mine.set_workspace(ws.path());
        auto append = builtin("file_write");
        ToolResult r = mine.call(append, R"({"path": ")" + file + R"(", "content": "line )" + std::to_string(t) +
                                             R"(\n", "append": true})");
        if (!r.ok()) ++failures;
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(ws.read(file).size(), static_cast<size_t>(kThreads) * 7) << file;
  }
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace dloop::tools
