// Loading a recorded run for `dloop trace export`, `dloop replay` and `dloop runs diff`: a run id
// in the state database, or a JSONL trace file. Errors are Status values whose message names the
// database, the run or the trace file and line. Not thread-safe (CLI start-up only).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dloop/base/status.h"
#include "dloop/memory/records.h"
#include "dloop/memory/store.h"

namespace dloop::cli {

struct RecordedRun {
  memory::Run run;
  std::vector<memory::Event> events;
  std::string source;  // "database PATH" or the trace file
  bool from_file = false;
};

// Opens an existing database (not_found when the file is missing).
base::Result<std::unique_ptr<memory::Store>> open_existing_db(const std::string& path);
// The run `id` and its events from the database at `db_path`.
base::Result<RecordedRun> load_run_from_db(const std::string& id, const std::string& db_path);
// A JSONL trace file (trace.h): not_found when missing; invalid_argument with FILE:LINE otherwise.
base::Result<RecordedRun> load_trace_file(const std::string& path);
// `ref` is a trace file when such a file exists, else a run id in the database.
base::Result<RecordedRun> load_recorded(const std::string& ref, const std::string& db_path);

// Reads a whole file; not_found / io errors name the path.
base::Result<std::string> read_text_file(const std::string& path);

}  // namespace dloop::cli
