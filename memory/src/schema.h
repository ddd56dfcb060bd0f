// The state database's schema as an ordered list of forward migrations, and the code that brings
// a database up to the latest version. Migration N is applied exactly once, in one transaction
// with every other pending migration, and recorded in the schema_version table. A released
// migration is never edited: a change is a new migration at the end of the list.
// Private to memory/. Not thread-safe: called by Store::open before the Store is shared.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "dloop/base/status.h"

namespace dloop::memory::detail {

// PRAGMA application_id of a dloop database: "dlop".
constexpr int64_t kApplicationId = 0x646c6f70;

int64_t latest_version();

// Reads the schema version without taking a write lock. invalid_argument for a database that is
// not dloop's (another application_id, or tables but no schema_version), unimplemented for a
// version newer than latest_version(), data_loss for a file that is not a database.
base::Result<int64_t> inspect(sqlite3* db);

// Applies every pending migration in one IMMEDIATE transaction (re-checking the version under
// the lock, so two processes opening a new file at once migrate it once). Returns the version.
base::Result<int64_t> migrate(sqlite3* db, const std::string& now_iso);

}  // namespace dloop::memory::detail
