// Collects validation problems while a workflow file is loaded (private to workflows/).
// Not thread-safe: one collector per load.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dloop/base/strings.h"
#include "dloop/workflows/workflow.h"

namespace dloop::workflows::detail {

struct Issue {
  Location location;
  std::string message;
};

class Issues {
 public:
  void error(Location where, std::string message) { issues_.push_back({where, std::move(message)}); }
  bool empty() const { return issues_.empty(); }
  size_t size() const { return issues_.size(); }
  const std::vector<Issue>& all() const { return issues_; }

 private:
  std::vector<Issue> issues_;
};

}  // namespace dloop::workflows::detail

namespace dloop::workflows::detail {

// Maps between byte offsets and 1-based line:column in a source text. Immutable after building.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text) : size_(text.size()) {
    starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') starts_.push_back(i + 1);
    }
  }
  // The byte offset of a location, clamped to the text.
  size_t offset(Location loc) const {
    if (loc.line < 1) return 0;
    size_t line = std::min(static_cast<size_t>(loc.line), starts_.size()) - 1;
    size_t off = starts_[line] + static_cast<size_t>(std::max(loc.column, 1) - 1);
    return std::min(off, size_);
  }
  Location location(size_t offset) const {
    offset = std::min(offset, size_);
    size_t line = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin());
    return {static_cast<int>(line), static_cast<int>(offset - starts_[line - 1] + 1)};
  }

 private:
  std::vector<size_t> starts_;
  size_t size_;
};

}  // namespace dloop::workflows::detail

namespace dloop::workflows::detail {

// base::closest_match, plus one swap of adjacent characters ("stpes" -> "steps"), the most
// common typo that plain edit distance counts twice.
inline std::optional<std::string> closest_name(std::string_view word, const std::vector<std::string>& candidates) {
  if (auto close = base::closest_match(word, candidates)) return close;
  for (const auto& c : candidates) {
    if (c.size() != word.size() || c.size() < 2) continue;
    size_t i = 0;
    while (i < c.size() && c[i] == word[i]) ++i;
    if (i + 1 < c.size() && c[i] == word[i + 1] && c[i + 1] == word[i] &&
        c.compare(i + 2, std::string::npos, word.substr(i + 2)) == 0) {
      return c;
    }
  }
  return std::nullopt;
}

}  // namespace dloop::workflows::detail
