// DocIndex: retrieval over the user's own documents (docs/retrieval.md). Text, Markdown and
// source files are cut into overlapping chunks of whole lines (Markdown chunks also break at
// headings), and each chunk's text goes into an SQLite FTS5 table (porter stemming) in the state
// database, with its file path and line range so answers can cite "docs/cli.md:40-62". Re-adding
// a path re-reads its files and rewrites only those whose content changed; files that vanished
// from an added folder are dropped. search() ranks chunks by BM25.
//
// Tables (created on first use next to the Store's): doc_files(path, hash, bytes, lines, chunks,
// indexed_at), doc_chunks(id, path, start_line, end_line, text) and the FTS5 table doc_fts.
// One DocIndex is one SQLite connection: not thread-safe; open one per thread. Other processes
// may use the same database at the same time (WAL, busy timeout).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/status.h"

namespace dloop::memory {

struct ChunkOptions {
  int max_lines = 40;        // a chunk has at most this many lines...
  size_t max_bytes = 2000;   // ...and at most this many bytes (a longer single line is one chunk)
  int overlap_lines = 5;     // each chunk repeats this many lines of the previous one
};

struct Chunk {
  int start_line = 1;  // 1-based, inclusive
  int end_line = 1;
  std::string text;    // the lines, '\n'-joined
};

// Cuts `text` into chunks. In Markdown a heading line starts a new chunk (without overlap) once
// the current one has 3 or more lines. Chunks of blank lines only are left out.
std::vector<Chunk> chunk_text(std::string_view text, bool markdown, const ChunkOptions& options = {});

struct IngestReport {
  int added = 0;      // files new to the index
  int updated = 0;    // files whose content changed (their chunks were replaced)
  int unchanged = 0;  // files with the same content hash (not rewritten)
  int removed = 0;    // files under an added folder that no longer exist
  int64_t chunks = 0; // chunks written
  std::vector<std::string> skipped;  // "path: reason" (binary, not UTF-8, too large)
};

struct SearchHit {
  std::string path;
  int start_line = 0;
  int end_line = 0;
  double score = 0;        // -bm25(): larger is better
  std::string text;        // the chunk
  int best_line = 0;       // the line of the chunk with the most query words
  std::string best_text;   // that line
};

// The JSON array `dloop index search --json` prints and the `retrieve` tool returns: per hit
// citation ("path:start-end"), path, start_line, end_line, score, best_line, best_text, text.
base::Json hits_to_json(const std::vector<SearchHit>& hits);

struct IndexedFile {
  std::string path;
  int64_t bytes = 0;
  int64_t lines = 0;
  int64_t chunks = 0;
  std::string indexed_at;
};

class DocIndex {
 public:
  // Opens the state database at `db_path` (creating and migrating it like Store::open) and the
  // index tables. Errors: those of Store::open; io/unavailable from SQLite.
  static base::Result<std::unique_ptr<DocIndex>> open(const std::string& db_path);
  ~DocIndex();
  DocIndex(const DocIndex&) = delete;
  DocIndex& operator=(const DocIndex&) = delete;

  // Ingests files and folders (recursively; names starting with '.' are skipped). Paths are
  // stored relative to the current directory when inside it, else absolute. Errors: not_found
  // naming a path that does not exist; SQLite errors (nothing of that file is written).
  base::Result<IngestReport> add(const std::vector<std::string>& paths, const ChunkOptions& options = {});
  // The k best chunks for the words of `query` (any word may match; BM25 ranks). Errors:
  // invalid_argument when the query has no searchable word.
  base::Result<std::vector<SearchHit>> search(std::string_view query, int k) const;
  base::Result<std::vector<IndexedFile>> files() const;

 private:
  DocIndex() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The FTS5 query for free text: its words, lower-cased and quoted, joined with OR, common
// English words left out ("what is the default" -> "\"default\""). Empty when no word is left.
std::string fts_query(std::string_view text);

}  // namespace dloop::memory
