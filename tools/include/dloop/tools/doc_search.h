// DocSearch: the document index behind the `retrieve` built-in (docs/retrieval.md). The runtime
// implements it over memory::DocIndex (the SQLite FTS5 index `dloop index add` fills); tools/
// only sees this interface, as with KvStore. Calls are blocking and come from tool pool threads,
// so implementations must be thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "dloop/base/json.h"
#include "dloop/base/status.h"

namespace dloop::tools {

class DocSearch {
 public:
  virtual ~DocSearch() = default;
  // The k best chunks for `query` in the index of database `db` ("" = the run's state
  // database), best first: [{path, start_line, end_line, citation ("path:start-end"), score
  // (BM25, larger is better), best_line, best_text, text}]. Errors: invalid_argument for a query
  // without words; not_found/io for a database that cannot be opened.
  virtual base::Result<base::Json> search(std::string_view query, int k, const std::string& db) = 0;
};

}  // namespace dloop::tools
