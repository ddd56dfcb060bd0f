// DocSearch over memory::DocIndex. See doc_search.h.
#include "doc_search.h"

#include "dloop/memory/doc_index.h"

namespace dloop::runtime {
namespace {

using base::Json;

class IndexSearch final : public tools::DocSearch {
 public:
  explicit IndexSearch(std::string db) : db_(std::move(db)) {}

  base::Result<Json> search(std::string_view query, int k, const std::string& db) override {
    const std::string& path = db.empty() ? db_ : db;
    if (path.empty() || path == ":memory:") return base::not_found("no state database file holds a document index");
    DLOOP_ASSIGN_OR_RETURN(auto index, memory::DocIndex::open(path));
    DLOOP_ASSIGN_OR_RETURN(auto hits, index->search(query, k));
    return memory::hits_to_json(hits);
  }

 private:
  std::string db_;
};

}  // namespace

std::shared_ptr<tools::DocSearch> make_doc_search(std::string default_db) {
  return std::make_shared<IndexSearch>(std::move(default_db));
}

}  // namespace dloop::runtime
