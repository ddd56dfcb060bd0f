// chunk_text() and fts_query(): the pure text side of DocIndex. See doc_index.h.
#include <algorithm>
#include <cctype>
#include <set>

#include "dloop/memory/doc_index.h"

namespace dloop::memory {
namespace {

bool is_heading(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 6 && line[i] == '#') ++i;
  return i > 0 && i < line.size() && line[i] == ' ';
}

bool blank(std::string_view line) {
  for (char c : line) {
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::vector<Chunk> chunk_text(std::string_view text, bool markdown, const ChunkOptions& options) {
  std::vector<std::string_view> lines;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    pos = nl + 1;
  }
  const int n = static_cast<int>(lines.size());
  const int max_lines = std::max(1, options.max_lines);
  const int overlap = std::clamp(options.overlap_lines, 0, max_lines - 1);
  std::vector<Chunk> out;
  int start = 0;
  while (start < n) {
    int end = start;
    size_t bytes = 0;
    bool heading_break = false;
    while (end < n) {
      if (end > start && markdown && is_heading(lines[end]) && end - start >= 3) {
        heading_break = true;
        break;
      }
      if (end > start && (end - start >= max_lines || bytes + lines[end].size() + 1 > options.max_bytes)) break;
      bytes += lines[end].size() + 1;
      ++end;
    }
    Chunk c;
    c.start_line = start + 1;
    c.end_line = end;
    bool all_blank = true;
    for (int i = start; i < end; ++i) {
      if (i > start) c.text += '\n';
      c.text.append(lines[i]);
      all_blank = all_blank && blank(lines[i]);
    }
    if (!all_blank) out.push_back(std::move(c));
    if (end >= n) break;
    int next = heading_break ? end : end - overlap;
    start = next > start ? next : end;
  }
  return out;
}

std::string fts_query(std::string_view text) {
  static const std::set<std::string> kStop = {
      "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how", "i", "in",
      "is", "it", "its", "of", "on", "or", "the", "this", "that", "to", "was", "what", "when", "where",
      "which", "who", "why", "with", "you", "your"};
  std::set<std::string> seen;
  std::string out;
  std::string word;
  auto flush = [&] {
    if (!word.empty() && !kStop.count(word) && seen.insert(word).second) {
      out += (out.empty() ? "\"" : " OR \"") + word + "\"";
    }
    word.clear();
  };
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '_' || c >= 0x80) {
      word.push_back(static_cast<char>(std::tolower(c)));
    } else {
      flush();
    }
  }
  flush();
  return out;
}

}  // namespace dloop::memory
