// `dloop trace export RUN_ID` and `dloop trace import FILE`: a run's trace as versioned JSONL or as
// OpenTelemetry GenAI spans in OTLP/JSON, and a JSONL trace (from this or another machine) written
// into a state database as a run that `dloop replay`, `runs show` and `runs diff` can use. The
// format is runtime/trace.h and docs/traces.md. Exit codes: 0 done, 1 failed, 2 bad usage or input.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "dloop/base/strings.h"
#include "dloop/runtime/trace.h"
#include "recorded_run.h"

namespace dloop::cli {
namespace {

using base::Json;

constexpr const char* kTraceUsage =
    "usage: dloop trace export RUN_ID|FILE [--format jsonl|otlp-json] [-o FILE] [--db PATH]\n"
    "       dloop trace import FILE [--db PATH] [--id NEW_ID]\n\n"
    "Export a run's trace (every event, secrets redacted) as JSONL or as OpenTelemetry GenAI spans\n"
    "(OTLP/JSON), or import a JSONL trace into a state database as a run.\n"
    "'dloop trace export --help' and 'dloop trace import --help' list the options.\n";

int fail(const char* verb, const base::Status& st) {
  std::fprintf(stderr, "dloop trace %s: %s\n", verb, st.message().c_str());
  const bool bad_input = st.code() == base::Code::kNotFound || st.code() == base::Code::kInvalidArgument ||
                         st.code() == base::Code::kUnimplemented || st.code() == base::Code::kDataLoss;
  return bad_input ? kExitUsage : kExitFailed;
}

// "-o FILE" is the one short flag: spelled out for the parser.
std::vector<std::string> expand_short(std::vector<std::string> args) {
  for (auto& a : args) {
    if (a == "-o") a = "--output";
  }
  return args;
}

int trace_export(const std::vector<std::string>& args) {
  ArgParser p("trace export", "RUN_ID|FILE [--format jsonl|otlp-json] [-o FILE] [--db PATH]",
              "Write a run's trace: the run and every event (model calls with their prompts, tools and\n"
              "decoding settings; tool calls with arguments, results, attempts and durations; step and run\n"
              "events with timestamps). Values of env names the workflow marks `secret: true` are replaced\n"
              "by [REDACTED:NAME] wherever they occur. RUN_ID is read from the database; a JSONL trace file\n"
              "can be given instead (to convert it to OTLP/JSON).");
  p.flag({"format", "F", "jsonl (one event a line, versioned) or otlp-json (OpenTelemetry spans)", false, "jsonl"})
      .flag({"output", "FILE", "write to FILE (also -o FILE) instead of standard output"})
      .flag({"db", "PATH", "state database", false, "$DLOOP_DB or ./dloop.db"});
  auto parsed = p.parse(expand_short(args), 1, 1);
  if (p.help_requested()) {
    std::fputs(p.usage().c_str(), stdout);
    return kExitOk;
  }
  if (!parsed.ok()) {
    std::fprintf(stderr, "dloop trace export: %s\n(see 'dloop trace export --help')\n", parsed.status().message().c_str());
    return kExitUsage;
  }
  const std::string format = parsed->get("format").value_or("jsonl");
  if (format != "jsonl" && format != "otlp-json") {
    std::fprintf(stderr, "dloop trace export: --format must be jsonl or otlp-json, not '%s'\n", format.c_str());
    return kExitUsage;
  }
  auto rec = load_recorded(parsed->positional()[0], parsed->get("db").value_or(memory::default_db_path()));
  if (!rec.ok()) return fail("export", rec.status());
  const std::string text = format == "jsonl" ? runtime::trace_jsonl(rec->run, rec->events)
                                             : runtime::trace_otlp(rec->run, rec->events).dump() + "\n";
  const auto secrets = runtime::run_secrets(rec->events);
  std::string redacted;
  for (const auto& s : secrets) redacted += (redacted.empty() ? "" : ", ") + s.first;
  if (auto out = parsed->get("output")) {
    std::ofstream f(*out, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) return fail("export", base::io_error("cannot write '" + *out + "'"));
    std::fprintf(stderr, "wrote run %s (%zu events, %s) to %s%s\n", rec->run.id.c_str(), rec->events.size(),
                 format.c_str(), out->c_str(), redacted.empty() ? "" : (" (redacted: " + redacted + ")").c_str());
  } else {
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return kExitOk;
}

// The trace's events and the stored ones agree (after the same redaction the export applies).
bool same_events(const std::vector<memory::Event>& stored, const std::vector<memory::Event>& imported) {
  if (stored.size() != imported.size()) return false;
  const auto secrets = runtime::run_secrets(stored);
  for (size_t i = 0; i < stored.size(); ++i) {
    const auto& a = stored[i];
    const auto& b = imported[i];
    if (a.seq != b.seq || a.type != b.type || a.step_path != b.step_path || a.attempt != b.attempt ||
        a.turn != b.turn || a.ts != b.ts || runtime::redact(a.payload, secrets) != b.payload) {
      return false;
    }
  }
  return true;
}

int trace_import(const std::vector<std::string>& args) {
  ArgParser p("trace import", "FILE [--db PATH] [--id NEW_ID]",
              "Write a JSONL trace (from 'dloop trace export', here or on another machine) into the state\n"
              "database as a run with the same id, events, timestamps and outcome. Importing a trace whose\n"
              "run is already there with the same events does nothing (exit 0); a different run with that\n"
              "id is refused unless --id gives the import another id. A truncated or malformed file is\n"
              "refused with its line number and nothing is written.");
  p.flag({"db", "PATH", "state database (created if missing)", false, "$DLOOP_DB or ./dloop.db"})
      .flag({"id", "NEW_ID", "import the run under this id instead of the recorded one"});
  auto parsed = p.parse(args, 1, 1);
  if (p.help_requested()) {
    std::fputs(p.usage().c_str(), stdout);
    return kExitOk;
  }
  if (!parsed.ok()) {
    std::fprintf(stderr, "dloop trace import: %s\n(see 'dloop trace import --help')\n", parsed.status().message().c_str());
    return kExitUsage;
  }
  auto rec = load_trace_file(parsed->positional()[0]);
  if (!rec.ok()) return fail("import", rec.status());
  if (auto id = parsed->get("id")) {
    rec->run.id = *id;
    for (auto& e : rec->events) e.run_id = *id;
  }
  const std::string db_path = parsed->get("db").value_or(memory::default_db_path());
  auto store = memory::Store::open(db_path);
  if (!store.ok()) return fail("import", store.status());
  auto existing = (*store)->get_run(rec->run.id);
  if (existing.ok()) {
    auto events = (*store)->events(rec->run.id);
    if (!events.ok()) return fail("import", events.status());
    if (same_events(*events, rec->events)) {
      std::fprintf(stderr, "run %s is already in %s with the same %zu events; nothing imported\n",
                   rec->run.id.c_str(), db_path.c_str(), rec->events.size());
      return kExitOk;
    }
    std::fprintf(stderr,
                 "dloop trace import: %s already has a different run with id '%s'; import this trace under "
                 "another id with --id NEW_ID\n",
                 db_path.c_str(), rec->run.id.c_str());
    return kExitFailed;
  }
  base::Status st = (*store)->import_run(rec->run, rec->events);
  if (!st.ok()) return fail("import", st.with_context(rec->source));
  std::fprintf(stderr, "imported run %s (%s, %zu events) into %s\n", rec->run.id.c_str(), rec->run.workflow.c_str(),
               rec->events.size(), db_path.c_str());
  std::printf("%s\n", rec->run.id.c_str());
  return kExitOk;
}

}  // namespace

int cmd_trace(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(kTraceUsage, stderr);
    return kExitUsage;
  }
  const std::string& sub = args[0];
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::fputs(kTraceUsage, stdout);
    return kExitOk;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (sub == "export") return trace_export(rest);
  if (sub == "import") return trace_import(rest);
  std::string msg = "unknown subcommand '" + sub + "'";
  if (auto close = base::closest_match(sub, {"export", "import"})) msg += " (did you mean '" + *close + "'?)";
  std::fprintf(stderr, "dloop trace: %s\n%s", msg.c_str(), kTraceUsage);
  return kExitUsage;
}

}  // namespace dloop::cli
