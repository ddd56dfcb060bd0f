// PromptCache: K/V rows of prompt prefixes kept across requests, keyed by the exact token prefix,
// with a byte budget and least-recently-used eviction. Entries are immutable once inserted and
// shared (a request copies the rows it needs), so an eviction never disturbs a running request.
// What is stored is defined by CachedForwarder (forwarder.h) and the device forwarders (device.h):
// rows computed from the prefix alone, so an entry is valid for every prompt that starts with its
// key. The rows live in host memory (HostPromptRows) or in a device's memory (the backend's own
// PromptRows); each kind has its own key space, so a lookup only finds rows it can use, and one
// byte budget covers them all.
// Thread-safety: all members are safe to call concurrently (one mutex).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "dloop/engine/forward_batch.h"

namespace dloop::engine {

struct PromptCacheStats {
  int64_t hits = 0;            // lookups that found at least one segment
  int64_t misses = 0;          // lookups that found none
  int64_t inserts = 0;
  int64_t evictions = 0;
  int64_t entries = 0;
  int64_t tokens_reused = 0;   // prompt rows served from the cache
  int64_t tokens_computed = 0; // prompt segment rows computed (and inserted)
  uint64_t bytes = 0;          // held by the entries
  uint64_t budget_bytes = 0;
};

// The K/V rows of one entry, wherever they are stored.
class PromptRows {
 public:
  virtual ~PromptRows() = default;
  virtual uint64_t bytes() const = 0;
};

struct HostPromptRows final : PromptRows {
  KvRows kv;
  uint64_t bytes() const override { return kv.bytes(); }
};

class PromptCache {
 public:
  explicit PromptCache(uint64_t budget_bytes) : budget_(budget_bytes) {}

  // The longest key of key space `space` among tokens[0, ends[i]) (ends ascending): its index in
  // `ends` and rows, or (-1, nullptr). Counts one hit or one miss and marks the entry most
  // recently used. The empty space holds HostPromptRows; a device backend names its own.
  std::pair<int, std::shared_ptr<const PromptRows>> find_longest(std::span<const int32_t> tokens,
                                                                  std::span<const int64_t> ends,
                                                                  std::string_view space = {});
  // Inserts (or refreshes) the entry for `key` in `space`, evicting least recently used entries
  // until the budget holds it. An entry larger than the whole budget is not kept.
  void insert(std::span<const int32_t> key, std::shared_ptr<const PromptRows> rows, std::string_view space = {});
  void note_computed(int64_t tokens);
  PromptCacheStats stats() const;
  void set_budget(uint64_t budget_bytes);
  void clear();

 private:
  struct Entry {
    std::string key;  // the key space, a NUL, the token ids' bytes
    std::shared_ptr<const PromptRows> rows;
    uint64_t bytes = 0;
  };
  void evict_to(uint64_t budget);  // mutex held

  mutable std::mutex mutex_;
  uint64_t budget_;
  std::list<Entry> lru_;  // front: most recently used
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  PromptCacheStats stats_;
};

}  // namespace dloop::engine
