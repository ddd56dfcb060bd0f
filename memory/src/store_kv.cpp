// Store: the per-workflow KV memory (memory_get / memory_put). Each put is its own transaction;
// a put that must commit with a turn's events goes through Batch::kv_put instead.
#include "store_impl.h"

namespace dloop::memory {

using base::Json;
using base::Result;
using base::Status;

namespace detail {

constexpr size_t kMaxKeyBytes = 1024;

Status validate_kv_key(const std::string& workflow, const std::string& key) {
  if (workflow.empty()) return base::invalid_argument("kv: the workflow name is empty");
  if (key.empty() || key.size() > kMaxKeyBytes) {
    return base::invalid_argument("kv: key must be 1.." + std::to_string(kMaxKeyBytes) + " bytes, got " +
                                  std::to_string(key.size()));
  }
  return Status();
}

}  // namespace detail

Result<std::optional<Json>> Store::kv_get(const std::string& workflow, const std::string& key) const {
  DLOOP_RETURN_IF_ERROR(detail::validate_kv_key(workflow, key));
  std::lock_guard lock(impl_->mu);
  DLOOP_ASSIGN_OR_RETURN(auto s, impl_->prepare("SELECT value FROM kv WHERE workflow = ?1 AND key = ?2",
                                                "reading kv memory"));
  s.bind(1, workflow).bind(2, key);
  DLOOP_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row) return std::optional<Json>();
  DLOOP_ASSIGN_OR_RETURN(Json value, detail::parse_stored_json(s.text_at(0), "kv " + workflow + "/" + key));
  return std::optional<Json>(std::move(value));
}

Status Store::kv_put(const std::string& workflow, const std::string& key, const Json& value) {
  DLOOP_RETURN_IF_ERROR(detail::validate_kv_key(workflow, key));
  std::lock_guard lock(impl_->mu);
  const std::string ts = impl_->now();
  return impl_->write_txn("writing kv memory", [&]() -> Status {
    DLOOP_ASSIGN_OR_RETURN(auto s, impl_->prepare("INSERT INTO kv (workflow, key, value, updated_at)"
                                                  " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (workflow, key)"
                                                  " DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                                                  "writing kv memory"));
    s.bind(1, workflow).bind(2, key).bind(3, value.dump()).bind(4, ts);
    return s.run();
  });
}

Result<bool> Store::kv_delete(const std::string& workflow, const std::string& key) {
  DLOOP_RETURN_IF_ERROR(detail::validate_kv_key(workflow, key));
  std::lock_guard lock(impl_->mu);
  bool existed = false;
  Status st = impl_->write_txn("deleting from kv memory", [&]() -> Status {
    DLOOP_ASSIGN_OR_RETURN(auto s, impl_->prepare("DELETE FROM kv WHERE workflow = ?1 AND key = ?2",
                                                  "deleting from kv memory"));
    s.bind(1, workflow).bind(2, key);
    DLOOP_RETURN_IF_ERROR(s.run());
    existed = sqlite3_changes(impl_->db) > 0;
    return Status();
  });
  if (!st.ok()) return st;
  return existed;
}

Result<std::vector<KvEntry>> Store::kv_list(const std::string& workflow, const std::string& prefix) const {
  if (workflow.empty()) return base::invalid_argument("kv: the workflow name is empty");
  std::lock_guard lock(impl_->mu);
  // substr/length count characters on both sides, so the prefix test is exact for UTF-8 keys.
  DLOOP_ASSIGN_OR_RETURN(auto s, impl_->prepare("SELECT key, value, updated_at FROM kv WHERE workflow = ?1"
                                                " AND substr(key, 1, length(?2)) = ?2 ORDER BY key",
                                                "listing kv memory"));
  s.bind(1, workflow).bind(2, prefix);
  std::vector<KvEntry> out;
  while (true) {
    DLOOP_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    KvEntry e;
    e.key = s.text_at(0);
    DLOOP_ASSIGN_OR_RETURN(e.value, detail::parse_stored_json(s.text_at(1), "kv " + workflow + "/" + e.key));
    e.updated_at = s.text_at(2);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace dloop::memory
