// PromptCache: an LRU list plus a hash index on the key bytes; see prompt_cache.h.
#include "dloop/engine/prompt_cache.h"

#include "dloop/base/log.h"

namespace dloop::engine {
namespace {

std::string key_of(std::span<const int32_t> tokens, std::string_view space) {
  std::string k(space);
  k.push_back('\0');
  k.append(reinterpret_cast<const char*>(tokens.data()), tokens.size() * sizeof(int32_t));
  return k;
}

}  // namespace

std::pair<int, std::shared_ptr<const PromptRows>> PromptCache::find_longest(std::span<const int32_t> tokens,
                                                                             std::span<const int64_t> ends,
                                                                             std::string_view space) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = ends.size(); i-- > 0;) {
    if (ends[i] <= 0 || ends[i] > static_cast<int64_t>(tokens.size())) continue;
    auto it = index_.find(key_of(tokens.first(static_cast<size_t>(ends[i])), space));
    if (it == index_.end()) continue;
    lru_.splice(lru_.begin(), lru_, it->second);
    ++stats_.hits;
    stats_.tokens_reused += ends[i];
    if (base::log_enabled(base::LogLevel::kDebug)) {
      base::log_line(base::LogLevel::kDebug, "prompt cache hit: " + std::to_string(ends[i]) + " of " +
                                                 std::to_string(tokens.size()) + " canvas tokens reused");
    }
    return {static_cast<int>(i), it->second->rows};
  }
  ++stats_.misses;
  if (base::log_enabled(base::LogLevel::kDebug)) {
    base::log_line(base::LogLevel::kDebug, "prompt cache miss (" + std::to_string(stats_.entries) + " entries)");
  }
  return {-1, nullptr};
}

void PromptCache::insert(std::span<const int32_t> key, std::shared_ptr<const PromptRows> rows,
                         std::string_view space) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t bytes = rows->bytes() + key.size() * sizeof(int32_t);
  std::string k = key_of(key, space);
  if (auto it = index_.find(k); it != index_.end()) {
    stats_.bytes -= it->second->bytes;
    lru_.erase(it->second);
    index_.erase(it);
    --stats_.entries;
  }
  if (bytes > budget_) return;
  evict_to(budget_ - bytes);
  lru_.push_front(Entry{k, std::move(rows), bytes});
  index_.emplace(std::move(k), lru_.begin());
  stats_.bytes += bytes;
  ++stats_.entries;
  ++stats_.inserts;
}

void PromptCache::evict_to(uint64_t budget) {
  while (stats_.bytes > budget && !lru_.empty()) {
    stats_.bytes -= lru_.back().bytes;
    index_.erase(lru_.back().key);
    lru_.pop_back();
    --stats_.entries;
    ++stats_.evictions;
  }
}

void PromptCache::note_computed(int64_t tokens) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.tokens_computed += tokens;
}

PromptCacheStats PromptCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  PromptCacheStats s = stats_;
  s.budget_bytes = budget_;
  return s;
}

void PromptCache::set_budget(uint64_t budget_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  budget_ = budget_bytes;
  evict_to(budget_);
}

void PromptCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  lru_.clear();
  index_.clear();
  stats_.bytes = 0;
  stats_.entries = 0;
}

}  // namespace dloop::engine
