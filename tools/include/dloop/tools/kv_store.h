// KvStore: the per-workflow key-value memory behind memory_get / memory_put. The runtime
// implements it over the SQLite state store (memory/); InMemoryKvStore serves tests and runs
// without a database. Calls are blocking and are made from tool pool threads, so implementations
// must be thread-safe. Values are JSON; keys are opaque strings within a scope (the workflow name).
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/status.h"

namespace dloop::tools {

class KvStore {
 public:
  virtual ~KvStore() = default;
  // nullopt when the key is absent. Errors: the store's own (io, unavailable for a busy database).
  virtual base::Result<std::optional<base::Json>> get(std::string_view scope, std::string_view key) = 0;
  // Inserts or replaces.
  virtual base::Status put(std::string_view scope, std::string_view key, const base::Json& value) = 0;
  // Removes; ok when the key was absent.
  virtual base::Status erase(std::string_view scope, std::string_view key) = 0;
  // Keys in a scope that start with prefix, sorted, at most `limit`.
  virtual base::Result<std::vector<std::string>> keys(std::string_view scope, std::string_view prefix,
                                                      size_t limit) = 0;
};

// A map under a mutex.
class InMemoryKvStore final : public KvStore {
 public:
  base::Result<std::optional<base::Json>> get(std::string_view scope, std::string_view key) override;
  base::Status put(std::string_view scope, std::string_view key, const base::Json& value) override;
  base::Status erase(std::string_view scope, std::string_view key) override;
  base::Result<std::vector<std::string>> keys(std::string_view scope, std::string_view prefix, size_t limit) override;

 private:
  std::mutex mu_;
  std::map<std::pair<std::string, std::string>, base::Json> data_;  // (scope, key) -> value
};

}  // namespace dloop::tools
