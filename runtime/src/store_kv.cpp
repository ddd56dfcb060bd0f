// StoreKvStore: tools::KvStore over memory::Store's KV table; see store_kv.h.
#include "dloop/runtime/store_kv.h"

namespace dloop::runtime {

base::Result<std::optional<base::Json>> StoreKvStore::get(std::string_view scope, std::string_view key) {
  return store_->kv_get(std::string(scope), std::string(key));
}

base::Status StoreKvStore::put(std::string_view scope, std::string_view key, const base::Json& value) {
  return store_->kv_put(std::string(scope), std::string(key), value);
}

base::Status StoreKvStore::erase(std::string_view scope, std::string_view key) {
  auto r = store_->kv_delete(std::string(scope), std::string(key));
  return r.status();
}

base::Result<std::vector<std::string>> StoreKvStore::keys(std::string_view scope, std::string_view prefix,
                                                          size_t limit) {
  DLOOP_ASSIGN_OR_RETURN(auto entries, store_->kv_list(std::string(scope), std::string(prefix)));
  std::vector<std::string> out;
  for (auto& e : entries) {
    if (out.size() >= limit) break;
    out.push_back(std::move(e.key));
  }
  return out;
}

}  // namespace dloop::runtime
