// InMemoryKvStore. See kv_store.h.
#include "dloop/tools/kv_store.h"

namespace dloop::tools {

base::Result<std::optional<base::Json>> InMemoryKvStore::get(std::string_view scope, std::string_view key) {
  std::lock_guard lock(mu_);
  auto it = data_.find({std::string(scope), std::string(key)});
  if (it == data_.end()) return std::optional<base::Json>();
  return std::optional<base::Json>(it->second);
}

base::Status InMemoryKvStore::put(std::string_view scope, std::string_view key, const base::Json& value) {
  std::lock_guard lock(mu_);
  data_[{std::string(scope), std::string(key)}] = value;
  return base::Status();
}

base::Status InMemoryKvStore::erase(std::string_view scope, std::string_view key) {
  std::lock_guard lock(mu_);
  data_.erase({std::string(scope), std::string(key)});
  return base::Status();
}

base::Result<std::vector<std::string>> InMemoryKvStore::keys(std::string_view scope, std::string_view prefix,
                                                             size_t limit) {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (auto it = data_.lower_bound({std::string(scope), std::string(prefix)});
       it != data_.end() && it->first.first == scope && out.size() < limit; ++it) {
    if (it->first.second.compare(0, prefix.size(), prefix) != 0) break;
    out.push_back(it->first.second);
  }
  return out;
}

}  // namespace dloop::tools
