// Trace files: a run's runs row and event log as versioned JSONL (`dloop trace export`, read back
// by `dloop trace import` and `dloop replay FILE`), and as OpenTelemetry GenAI spans in OTLP/JSON
// (`--format otlp-json`). Both exports redact the run's secrets: the values of the workflow's
// `env:` names marked `secret: true`, wherever they occur in any string, become
// "[REDACTED:NAME]". docs/traces.md is the format's reference.
//
// What it is not: it does not touch a database; the CLI reads and writes the Store.
// Pure functions over values; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/status.h"
#include "dloop/memory/records.h"

namespace dloop::runtime {

// The JSONL format version this dloop writes and the newest it reads.
constexpr int64_t kTraceFormatVersion = 1;

struct Trace {
  memory::Run run;
  std::vector<memory::Event> events;  // seq 1..n, run_started first
  std::vector<std::string> redacted;  // names whose values the exporter redacted
};

// (NAME, value) of each secret the run recorded (run_started's env and secret_env), non-empty
// string values only.
std::vector<std::pair<std::string, std::string>> run_secrets(const std::vector<memory::Event>& events);
// `value` with every occurrence of each secret value inside any string replaced.
base::Json redact(const base::Json& value, const std::vector<std::pair<std::string, std::string>>& secrets);

// The JSONL text: a header line, then one line per event (docs/traces.md). Redacted.
std::string trace_jsonl(const memory::Run& run, const std::vector<memory::Event>& events);
// Parses JSONL trace text. Errors (invalid_argument) name `source` and the line:
// "run.jsonl:7: not valid JSON: ...", "run.jsonl:1: trace format version 2 is newer than ...",
// "run.jsonl: truncated: the header announces 12 events, the file has 9 (last line 10)".
base::Result<Trace> parse_trace_jsonl(std::string_view text, const std::string& source);

// OTLP/JSON (an ExportTraceServiceRequest): one trace per run, spans invoke_workflow (root),
// invoke_agent / step (per step attempt), chat (per model call) and execute_tool (per tool call),
// with gen_ai.* attributes. Span and trace ids derive from the run id, so exports are stable.
base::Json trace_otlp(const memory::Run& run, const std::vector<memory::Event>& events);

// Unix milliseconds of an ISO-8601 UTC timestamp as the store writes them; -1 when malformed.
int64_t parse_iso_ms(std::string_view iso);

}  // namespace dloop::runtime
