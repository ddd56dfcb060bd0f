// DocIndex: files -> chunks -> FTS5, and BM25 search. See doc_index.h.
#include "dloop/memory/doc_index.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "dloop/base/strings.h"
#include "dloop/memory/store.h"
#include "sqlite_util.h"

namespace dloop::memory {

namespace fs = std::filesystem;
using detail::Stmt;

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS doc_files(
  path TEXT PRIMARY KEY, hash TEXT NOT NULL, bytes INTEGER NOT NULL, lines INTEGER NOT NULL,
  chunks INTEGER NOT NULL, indexed_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS doc_chunks(
  id INTEGER PRIMARY KEY, path TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
  text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS doc_chunks_by_path ON doc_chunks(path);
CREATE VIRTUAL TABLE IF NOT EXISTS doc_fts USING fts5(
  text, path, content='doc_chunks', content_rowid='id', tokenize='porter unicode61');
CREATE TRIGGER IF NOT EXISTS doc_chunks_ai AFTER INSERT ON doc_chunks BEGIN
  INSERT INTO doc_fts(rowid, text, path) VALUES (new.id, new.text, new.path);
END;
CREATE TRIGGER IF NOT EXISTS doc_chunks_ad AFTER DELETE ON doc_chunks BEGIN
  INSERT INTO doc_fts(doc_fts, rowid, text, path) VALUES ('delete', old.id, old.text, old.path);
END;
)sql";

constexpr size_t kMaxFileBytes = 4 << 20;

std::string fnv1a_hex(std::string_view bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// The stored form of a path: relative to the current directory when inside it.
std::string stored_path(const fs::path& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec).lexically_normal();
  fs::path rel = abs.lexically_relative(fs::current_path(ec));
  if (!rel.empty() && *rel.begin() != "..") return rel.string();
  return abs.string();
}

bool is_markdown(const fs::path& p) {
  std::string ext = p.extension().string();
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".md" || ext == ".markdown";
}

// The words of a query, lower-cased (the same split as fts_query, stop words kept out).
std::vector<std::string> query_words(std::string_view query) {
  std::vector<std::string> words;
  std::string q = fts_query(query);
  for (size_t pos = 0; (pos = q.find('"', pos)) != std::string::npos;) {
    size_t end = q.find('"', pos + 1);
    std::string w = q.substr(pos + 1, end - pos - 1);
    // Compare on a crude stem so "defaults" finds "default".
    if (w.size() > 4) w.resize(std::max<size_t>(4, w.size() - 2));
    words.push_back(w);
    pos = end + 1;
  }
  return words;
}

int words_in_line(std::string_view line, const std::vector<std::string>& words) {
  std::string lower;
  for (char c : line) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  int n = 0;
  for (const auto& w : words) {
    for (size_t pos = 0; (pos = lower.find(w, pos)) != std::string::npos; ++pos) {
      bool starts_word = pos == 0 || !std::isalnum(static_cast<unsigned char>(lower[pos - 1]));
      if (starts_word) {
        ++n;
        break;
      }
    }
  }
  return n;
}

}  // namespace

struct DocIndex::Impl {
  sqlite3* db = nullptr;
  mutable detail::StatementCache cache;
  ~Impl() {
    cache.clear();
    if (db) sqlite3_close_v2(db);
  }
  base::Status begin() { return detail::exec(db, "BEGIN IMMEDIATE", "doc index: begin"); }
  base::Status commit() { return detail::exec(db, "COMMIT", "doc index: commit"); }
  void rollback() { (void)detail::exec(db, "ROLLBACK", "doc index: rollback"); }

  base::Status remove_file(const std::string& path) {
    DLOOP_ASSIGN_OR_RETURN(auto del, cache.get("DELETE FROM doc_chunks WHERE path = ?", "doc index: delete chunks"));
    DLOOP_RETURN_IF_ERROR(del.bind(1, path).run());
    DLOOP_ASSIGN_OR_RETURN(auto f, cache.get("DELETE FROM doc_files WHERE path = ?", "doc index: delete file"));
    return f.bind(1, path).run();
  }

  // Adds or replaces one file; "" when written, or the reason it was skipped.
  base::Result<std::string> ingest(const fs::path& file, const ChunkOptions& options, IngestReport& report) {
    const std::string path = stored_path(file);
    std::error_code ec;
    auto size = fs::file_size(file, ec);
    if (ec) return path + ": " + ec.message();
    if (size > kMaxFileBytes) return path + ": larger than 4 MiB";
    std::ifstream in(file, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    if (!in && !in.eof()) return path + ": cannot read";
    if (text.substr(0, 8192).find('\0') != std::string::npos) return path + ": binary (contains NUL bytes)";
    if (auto bad = base::find_invalid_utf8(text)) return path + ": not UTF-8 text (byte offset " + std::to_string(*bad) + ")";
    const std::string hash = fnv1a_hex(text);
    bool found = false;
    std::string old_hash;
    {  // the statement resets at the end of this block, before the write transaction
      DLOOP_ASSIGN_OR_RETURN(auto q, cache.get("SELECT hash FROM doc_files WHERE path = ?", "doc index: file hash"));
      q.bind(1, path);
      DLOOP_ASSIGN_OR_RETURN(found, q.step());
      if (found) old_hash = q.text_at(0);
    }
    if (found && old_hash == hash) {
      ++report.unchanged;
      return std::string();
    }
    auto chunks = chunk_text(text, is_markdown(file), options);
    DLOOP_RETURN_IF_ERROR(begin());
    auto write = [&]() -> base::Status {
      DLOOP_RETURN_IF_ERROR(remove_file(path));
      DLOOP_ASSIGN_OR_RETURN(auto ins, cache.get("INSERT INTO doc_chunks(path, start_line, end_line, text) VALUES (?, ?, ?, ?)",
                                                 "doc index: insert chunk"));
      for (const auto& c : chunks) {
        DLOOP_RETURN_IF_ERROR(ins.bind(1, path).bind(2, int64_t{c.start_line}).bind(3, int64_t{c.end_line}).bind(4, c.text).run());
        sqlite3_reset(ins.raw());
      }
      int64_t lines = static_cast<int64_t>(std::count(text.begin(), text.end(), '\n')) +
                      (!text.empty() && text.back() != '\n' ? 1 : 0);
      const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count();
      DLOOP_ASSIGN_OR_RETURN(auto f, cache.get("INSERT INTO doc_files(path, hash, bytes, lines, chunks, indexed_at) "
                                               "VALUES (?, ?, ?, ?, ?, ?)", "doc index: insert file"));
      return f.bind(1, path).bind(2, hash).bind(3, static_cast<int64_t>(text.size())).bind(4, lines)
          .bind(5, static_cast<int64_t>(chunks.size())).bind(6, detail::iso_time(now)).run();
    };
    base::Status st = write();
    if (!st.ok()) {
      rollback();
      return st.with_context(path);
    }
    DLOOP_RETURN_IF_ERROR(commit());
    (found ? report.updated : report.added) += 1;
    report.chunks += static_cast<int64_t>(chunks.size());
    return std::string();
  }
};

DocIndex::~DocIndex() = default;

base::Result<std::unique_ptr<DocIndex>> DocIndex::open(const std::string& db_path) {
  {  // creates or migrates the state database, and refuses a file that is not one
    DLOOP_ASSIGN_OR_RETURN(auto store, Store::open(db_path));
  }
  std::unique_ptr<DocIndex> index(new DocIndex());
  index->impl_ = std::make_unique<Impl>();
  Impl& m = *index->impl_;
  int rc = sqlite3_open_v2(db_path.c_str(), &m.db, SQLITE_OPEN_READWRITE, nullptr);
  if (rc != SQLITE_OK) return detail::sqlite_status(m.db, rc, db_path + ": open");
  sqlite3_busy_timeout(m.db, 5000);
  m.cache.set_db(m.db);
  DLOOP_RETURN_IF_ERROR(detail::exec(m.db, "PRAGMA journal_mode=WAL", "doc index: WAL"));
  DLOOP_RETURN_IF_ERROR(detail::exec(m.db, kSchema, "doc index: create tables"));
  return index;
}

base::Result<IngestReport> DocIndex::add(const std::vector<std::string>& paths, const ChunkOptions& options) {
  IngestReport report;
  for (const auto& given : paths) {
    fs::path p(given);
    std::error_code ec;
    auto status = fs::status(p, ec);
    if (ec || !fs::exists(status)) return base::not_found(given + ": no such file or folder");
    if (!fs::is_directory(status)) {
      DLOOP_ASSIGN_OR_RETURN(std::string skipped, impl_->ingest(p, options, report));
      if (!skipped.empty()) report.skipped.push_back(skipped);
      continue;
    }
    std::set<std::string> seen;
    std::vector<fs::path> found;
    for (auto it = fs::recursive_directory_iterator(p, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (!name.empty() && name[0] == '.') {
        if (it->is_directory()) it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file()) found.push_back(it->path());
    }
    if (ec) return base::io_error(given + ": " + ec.message());
    std::sort(found.begin(), found.end());
    for (const auto& f : found) {
      seen.insert(stored_path(f));
      DLOOP_ASSIGN_OR_RETURN(std::string skipped, impl_->ingest(f, options, report));
      if (!skipped.empty()) report.skipped.push_back(skipped);
    }
    // Files indexed under this folder that are gone (or now skipped) leave the index.
    std::string prefix = stored_path(p);
    if (prefix == ".") prefix.clear();
    if (!prefix.empty() && prefix.back() != '/') prefix += '/';
    DLOOP_ASSIGN_OR_RETURN(auto all, files());
    for (const auto& f : all) {
      bool under = prefix.empty() ? f.path[0] != '/' : base::starts_with(f.path, prefix);
      if (!under || seen.count(f.path)) continue;
      DLOOP_RETURN_IF_ERROR(impl_->begin());
      base::Status st = impl_->remove_file(f.path);
      if (!st.ok()) {
        impl_->rollback();
        return st;
      }
      DLOOP_RETURN_IF_ERROR(impl_->commit());
      ++report.removed;
    }
  }
  return report;
}

base::Result<std::vector<SearchHit>> DocIndex::search(std::string_view query, int k) const {
  const std::string match = fts_query(query);
  if (match.empty()) return base::invalid_argument("the query '" + std::string(query) + "' has no words to search for");
  DLOOP_ASSIGN_OR_RETURN(auto q, impl_->cache.get(
                                     "SELECT c.path, c.start_line, c.end_line, c.text, bm25(doc_fts) AS rank "
                                     "FROM doc_fts JOIN doc_chunks c ON c.id = doc_fts.rowid "
                                     "WHERE doc_fts MATCH ? ORDER BY rank, c.path, c.start_line LIMIT ?",
                                     "doc index: search"));
  q.bind(1, match).bind(2, static_cast<int64_t>(std::max(1, k)));
  const auto words = query_words(query);
  std::vector<SearchHit> hits;
  while (true) {
    DLOOP_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    SearchHit h;
    h.path = q.text_at(0);
    h.start_line = static_cast<int>(q.int_at(1));
    h.end_line = static_cast<int>(q.int_at(2));
    h.text = q.text_at(3);
    h.score = -sqlite3_column_double(q.raw(), 4);
    int line_no = h.start_line, best = -1;
    for (size_t pos = 0; pos <= h.text.size();) {
      size_t nl = h.text.find('\n', pos);
      if (nl == std::string::npos) nl = h.text.size();
      std::string_view line(h.text.data() + pos, nl - pos);
      int n = words_in_line(line, words);
      if (n > best) {
        best = n;
        h.best_line = line_no;
        h.best_text = std::string(line);
      }
      ++line_no;
      pos = nl + 1;
    }
    hits.push_back(std::move(h));
  }
  return hits;
}

base::Result<std::vector<IndexedFile>> DocIndex::files() const {
  DLOOP_ASSIGN_OR_RETURN(auto q, impl_->cache.get("SELECT path, bytes, lines, chunks, indexed_at FROM doc_files ORDER BY path",
                                                  "doc index: files"));
  std::vector<IndexedFile> out;
  while (true) {
    DLOOP_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    out.push_back({q.text_at(0), q.int_at(1), q.int_at(2), q.int_at(3), q.text_at(4)});
  }
  return out;
}

base::Json hits_to_json(const std::vector<SearchHit>& hits) {
  base::Json out = base::Json::array();
  for (const auto& h : hits) {
    base::Json j = base::Json::object();
    j.set("citation", h.path + ":" + std::to_string(h.start_line) + "-" + std::to_string(h.end_line));
    j.set("path", h.path);
    j.set("start_line", h.start_line);
    j.set("end_line", h.end_line);
    j.set("score", h.score);
    j.set("best_line", h.best_line);
    j.set("best_text", h.best_text);
    j.set("text", h.text);
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace dloop::memory
