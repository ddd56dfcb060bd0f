// Loading recorded runs from the database or a trace file; see recorded_run.h.
#include "recorded_run.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "dloop/runtime/trace.h"

namespace dloop::cli {

base::Result<std::string> read_text_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return base::not_found("no file '" + path + "'");
  std::ifstream in(path, std::ios::binary);
  if (!in) return base::io_error("cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

base::Result<std::unique_ptr<memory::Store>> open_existing_db(const std::string& path) {
  memory::StoreOptions options;
  options.create_if_missing = false;
  auto store = memory::Store::open(path, options);
  if (!store.ok() && store.status().code() == base::Code::kNotFound) {
    return base::not_found("no database at '" + path + "' (give --db PATH or set DLOOP_DB)");
  }
  return store;
}

base::Result<RecordedRun> load_run_from_db(const std::string& id, const std::string& db_path) {
  DLOOP_ASSIGN_OR_RETURN(auto store, open_existing_db(db_path));
  RecordedRun r;
  DLOOP_ASSIGN_OR_RETURN(r.run, store->get_run(id));
  DLOOP_ASSIGN_OR_RETURN(r.events, store->events(id));
  r.source = "database " + db_path;
  return r;
}

base::Result<RecordedRun> load_trace_file(const std::string& path) {
  DLOOP_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  DLOOP_ASSIGN_OR_RETURN(runtime::Trace t, runtime::parse_trace_jsonl(text, path));
  RecordedRun r;
  r.run = std::move(t.run);
  r.events = std::move(t.events);
  r.source = path;
  r.from_file = true;
  return r;
}

base::Result<RecordedRun> load_recorded(const std::string& ref, const std::string& db_path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(ref, ec)) return load_trace_file(ref);
  return load_run_from_db(ref, db_path);
}

}  // namespace dloop::cli
