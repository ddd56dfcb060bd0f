// Private: the runtime's DocSearch (tools/doc_search.h) over memory::DocIndex. Each search opens
// the index database on the calling pool thread (a DocIndex is one SQLite connection; opening is
// cheap next to a search), so concurrent searches never share a connection. Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "dloop/tools/doc_search.h"

namespace dloop::runtime {

// `default_db`: the run's state database, used when a call names none.
std::shared_ptr<tools::DocSearch> make_doc_search(std::string default_db);

}  // namespace dloop::runtime
