// `dloop index add PATH... [--db]`, `dloop index search QUERY [--db] [-k N] [--json]` and
// `dloop index list [--db]`: the document index (memory::DocIndex, docs/retrieval.md) that the
// `retrieve` built-in searches. The database is --db, else $DLOOP_DB, else ./dloop.db.
#include <cstdio>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "dloop/base/json.h"
#include "dloop/memory/doc_index.h"
#include "dloop/memory/store.h"

namespace dloop::cli {
namespace {

using base::Json;

constexpr const char* kIndexUsage =
    "usage: dloop index add PATH... [--db PATH] [--chunk-lines N] [--overlap N] [--json]\n"
    "       dloop index search QUERY [--db PATH] [-k N | --k N] [--json]\n"
    "       dloop index list [--db PATH] [--json]\n\n"
    "The document index in the state database (SQLite FTS5): 'add' ingests text, Markdown and\n"
    "source files (folders recursively), re-reading only what changed; 'search' prints the best\n"
    "chunks with BM25 scores and path:line citations; 'list' shows the indexed files. Workflows\n"
    "search the same index with the 'retrieve' built-in tool (docs/retrieval.md).\n"
    "'dloop index SUBCOMMAND --help' lists the options.\n";

ArgParser add_parser() {
  ArgParser p("index add", "PATH... [--db PATH] [--chunk-lines N] [--overlap N] [--json]",
              "Add files and folders to the document index. Unchanged files are left as they are, changed\n"
              "ones are re-chunked, and files that disappeared from an added folder leave the index.");
  p.flag({"db", "PATH", "state database", false, "$DLOOP_DB or ./dloop.db"})
      .flag({"chunk-lines", "N", "lines per chunk at most", false, "40"})
      .flag({"overlap", "N", "lines each chunk repeats from the previous one", false, "5"})
      .flag({"json", "", "print the report as JSON"});
  return p;
}

ArgParser search_parser() {
  ArgParser p("index search", "QUERY [--db PATH] [--k N] [--json]",
              "Search the document index: the best chunks for the words of QUERY (BM25), with their\n"
              "path:start-end citations and the best-matching line.");
  p.flag({"db", "PATH", "state database", false, "$DLOOP_DB or ./dloop.db"})
      .flag({"k", "N", "how many chunks", false, "5"})
      .flag({"json", "", "print {\"results\": [...]} with each chunk's text"});
  return p;
}

ArgParser list_parser() {
  ArgParser p("index list", "[--db PATH] [--json]", "List the files in the document index.");
  p.flag({"db", "PATH", "state database", false, "$DLOOP_DB or ./dloop.db"}).flag({"json", "", "print JSON"});
  return p;
}

int fail(const std::string& verb, const base::Status& st) {
  std::fprintf(stderr, "dloop index %s: %s\n", verb.c_str(), st.message().c_str());
  const bool bad_input = st.code() == base::Code::kNotFound || st.code() == base::Code::kInvalidArgument ||
                         st.code() == base::Code::kUnimplemented || st.code() == base::Code::kDataLoss;
  return bad_input ? kExitUsage : kExitFailed;
}

int usage(const std::string& verb, const std::string& message) {
  std::fprintf(stderr, "dloop index %s: %s\n(see 'dloop index %s --help')\n", verb.c_str(), message.c_str(), verb.c_str());
  return kExitUsage;
}

int run_add(const std::vector<std::string>& args) {
  ArgParser parser = add_parser();
  auto parsed = parser.parse(args, 1, 100000);
  if (parser.help_requested()) return std::fputs(parser.usage().c_str(), stdout), kExitOk;
  if (!parsed.ok()) return usage("add", parsed.status().message());
  memory::ChunkOptions options;
  auto lines = parsed->get_int("chunk-lines", 40, 1, 10000);
  if (!lines.ok()) return usage("add", lines.status().message());
  auto overlap = parsed->get_int("overlap", 5, 0, 9999);
  if (!overlap.ok()) return usage("add", overlap.status().message());
  if (*overlap >= *lines) return usage("add", "--overlap must be smaller than --chunk-lines");
  options.max_lines = static_cast<int>(*lines);
  options.overlap_lines = static_cast<int>(*overlap);
  auto index = memory::DocIndex::open(parsed->get("db").value_or(memory::default_db_path()));
  if (!index.ok()) return fail("add", index.status());
  auto report = (*index)->add(parsed->positional(), options);
  if (!report.ok()) return fail("add", report.status());
  if (parsed->has("json")) {
    Json j = Json::object();
    j.set("added", report->added);
    j.set("updated", report->updated);
    j.set("unchanged", report->unchanged);
    j.set("removed", report->removed);
    j.set("chunks", report->chunks);
    Json skipped = Json::array();
    for (const auto& s : report->skipped) skipped.push_back(s);
    j.set("skipped", std::move(skipped));
    std::printf("%s\n", j.dump(Json::Style::kPretty).c_str());
  } else {
    std::printf("added %d, updated %d, unchanged %d, removed %d files; %lld chunks written\n", report->added,
                report->updated, report->unchanged, report->removed, static_cast<long long>(report->chunks));
    for (const auto& s : report->skipped) std::printf("skipped %s\n", s.c_str());
  }
  return kExitOk;
}

int run_search(const std::vector<std::string>& args) {
  ArgParser parser = search_parser();
  std::vector<std::string> fixed = args;
  for (auto& a : fixed) {
    if (a == "-k") a = "--k";
  }
  auto parsed = parser.parse(fixed, 1, 1);
  if (parser.help_requested()) return std::fputs(parser.usage().c_str(), stdout), kExitOk;
  if (!parsed.ok()) return usage("search", parsed.status().message());
  auto k = parsed->get_int("k", 5, 1, 1000);
  if (!k.ok()) return usage("search", k.status().message());
  auto index = memory::DocIndex::open(parsed->get("db").value_or(memory::default_db_path()));
  if (!index.ok()) return fail("search", index.status());
  auto hits = (*index)->search(parsed->positional()[0], static_cast<int>(*k));
  if (!hits.ok()) return fail("search", hits.status());
  if (parsed->has("json")) {
    Json results = memory::hits_to_json(*hits);
    std::printf("%s\n", Json::object({{"results", std::move(results)}}).dump(Json::Style::kPretty).c_str());
    return kExitOk;
  }
  if (hits->empty()) std::printf("no matches\n");
  for (const auto& h : *hits) {
    std::printf("%s:%d-%d  score %.3f\n  %d: %s\n", h.path.c_str(), h.start_line, h.end_line, h.score, h.best_line,
                h.best_text.c_str());
  }
  return kExitOk;
}

int run_list(const std::vector<std::string>& args) {
  ArgParser parser = list_parser();
  auto parsed = parser.parse(args, 0, 0);
  if (parser.help_requested()) return std::fputs(parser.usage().c_str(), stdout), kExitOk;
  if (!parsed.ok()) return usage("list", parsed.status().message());
  auto index = memory::DocIndex::open(parsed->get("db").value_or(memory::default_db_path()));
  if (!index.ok()) return fail("list", index.status());
  auto files = (*index)->files();
  if (!files.ok()) return fail("list", files.status());
  if (parsed->has("json")) {
    Json arr = Json::array();
    for (const auto& f : *files) {
      arr.push_back(Json::object({{"path", f.path}, {"bytes", f.bytes}, {"lines", f.lines}, {"chunks", f.chunks},
                                  {"indexed_at", f.indexed_at}}));
    }
    std::printf("%s\n", Json::object({{"files", std::move(arr)}}).dump(Json::Style::kPretty).c_str());
    return kExitOk;
  }
  for (const auto& f : *files) {
    std::printf("%-50s %8lld lines %5lld chunks  %s\n", f.path.c_str(), static_cast<long long>(f.lines),
                static_cast<long long>(f.chunks), f.indexed_at.c_str());
  }
  return kExitOk;
}

}  // namespace

int cmd_index(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(kIndexUsage, stderr);
    return kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kIndexUsage, stdout);
    return kExitOk;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "add") return run_add(rest);
  if (args[0] == "search") return run_search(rest);
  if (args[0] == "list") return run_list(rest);
  std::fprintf(stderr, "dloop index: unknown subcommand '%s' (add, search, list)\n%s", args[0].c_str(), kIndexUsage);
  return kExitUsage;
}

}  // namespace dloop::cli
