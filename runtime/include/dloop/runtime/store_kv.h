// StoreKvStore: the tools' KvStore (memory_get / memory_put) over memory::Store's per-workflow KV
// table. Calls block on SQLite; tools make them from pool threads. Thread-safe (the Store is).
#pragma once

#include <memory>

#include "dloop/memory/store.h"
#include "dloop/tools/kv_store.h"

namespace dloop::runtime {

class StoreKvStore final : public tools::KvStore {
 public:
  explicit StoreKvStore(std::shared_ptr<memory::Store> store) : store_(std::move(store)) {}
  base::Result<std::optional<base::Json>> get(std::string_view scope, std::string_view key) override;
  base::Status put(std::string_view scope, std::string_view key, const base::Json& value) override;
  base::Status erase(std::string_view scope, std::string_view key) override;
  base::Result<std::vector<std::string>> keys(std::string_view scope, std::string_view prefix, size_t limit) override;

 private:
  std::shared_ptr<memory::Store> store_;
};

}  // namespace dloop::runtime
