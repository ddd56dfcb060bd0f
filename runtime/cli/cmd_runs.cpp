// `dloop runs list` and `dloop runs show RUN_ID`: the runs in the state database as a table or as
// JSON. Read-only use of memory::Store (opening an older database migrates it forward). The
// database is --db, else $DLOOP_DB, else ./dloop.db (memory::default_db_path()).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "dloop/base/json.h"
#include "dloop/base/strings.h"
#include "dloop/memory/store.h"
#include "dloop/runtime/trace.h"

namespace dloop::cli {
namespace {

using base::Json;

constexpr const char* kRunsUsage =
    "usage: dloop runs list [--db PATH] [--status S] [--workflow NAME] [--limit N] [--json]\n"
    "       dloop runs show RUN_ID [--db PATH] [--json]\n"
    "       dloop runs diff A B [--db PATH]\n\n"
    "List the runs in the state database, show one run with its steps and events, or show two\n"
    "runs side by side step by step.\n"
    "The database is --db PATH, else $DLOOP_DB, else ./dloop.db.\n"
    "'dloop runs SUBCOMMAND --help' lists the options.\n";

ArgParser list_parser() {
  ArgParser p("runs list", "[--db PATH] [--status S] [--workflow NAME] [--limit N] [--json]",
              "List runs, newest first. The database is --db PATH, else $DLOOP_DB, else ./dloop.db.");
  p.flag({"db", "PATH", "state database", false, "$DLOOP_DB or ./dloop.db"})
      .flag({"status", "S", "only runs with this status: running, completed, failed, cancelled"})
      .flag({"workflow", "NAME", "only runs of this workflow"})
      .flag({"limit", "N", "at most N runs; 0 = all", false, "50"})
      .flag({"json", "", "print {\"runs\": [...]} instead of a table"});
  return p;
}

ArgParser show_parser() {
  ArgParser p("runs show", "RUN_ID [--db PATH] [--json]",
              "Show one run: its inputs, outputs and status, its steps, and its events summarised\n"
              "(--json prints every event's full payload).");
  p.flag({"db", "PATH", "state database", false, "$DLOOP_DB or ./dloop.db"})
      .flag({"json", "", "print {\"run\": ..., \"steps\": [...], \"events\": [...]}"});
  return p;
}

int usage_error(const std::string& verb, const std::string& message) {
  std::fprintf(stderr, "dloop %s: %s\n(see 'dloop %s --help')\n", verb.c_str(), message.c_str(), verb.c_str());
  return kExitUsage;
}

// Opens the database; prints the reason and sets *exit_code when it cannot. A missing file, a
// newer or foreign database and a corrupt file are bad input (2); anything else failed (1).
std::unique_ptr<memory::Store> open_store(const std::string& verb, const ParsedArgs& a, int* exit_code) {
  const std::string path = a.get("db").value_or(memory::default_db_path());
  memory::StoreOptions options;
  options.create_if_missing = false;
  auto store = memory::Store::open(path, options);
  if (store.ok()) return std::move(store).value();
  const base::Status& st = store.status();
  if (st.code() == base::Code::kNotFound) {
    std::fprintf(stderr, "dloop %s: no database at '%s' (give --db PATH or set DLOOP_DB)\n", verb.c_str(),
                 path.c_str());
  } else {
    std::fprintf(stderr, "dloop %s: %s\n", verb.c_str(), st.message().c_str());
  }
  const bool bad_input = st.code() == base::Code::kNotFound || st.code() == base::Code::kUnimplemented ||
                         st.code() == base::Code::kInvalidArgument || st.code() == base::Code::kDataLoss;
  *exit_code = bad_input ? kExitUsage : kExitFailed;
  return nullptr;
}

// Cuts s to at most `max` bytes on a UTF-8 boundary, marking the cut with "...", and flattens
// line breaks so a cell stays on one line.
std::string cell(std::string s, size_t max) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  if (s.size() <= max) return s;
  size_t cut = max > 3 ? max - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "...";
}

// "2026-12-02T13:28:50.123Z" -> "2026-12-02 13:28:50"
std::string short_time(const std::string& iso) {
  if (iso.size() < 19) return iso;
  std::string s = iso.substr(0, 19);
  s[10] = ' ';
  return s;
}

void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                 const std::string& indent = "") {
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& r) {
    std::string out = indent;
    for (size_t c = 0; c < r.size(); ++c) {
      out += r[c];
      if (c + 1 < r.size()) out.append(width[c] - r[c].size() + 2, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    std::printf("%s\n", out.c_str());
  };
  line(header);
  for (const auto& r : rows) line(r);
}

std::string compact(const Json* j) { return j == nullptr || j->is_null() ? "" : j->dump(); }

std::string error_of(const Json& payload, const char* key) {
  const Json* e = payload.find(key);
  if (e == nullptr || e->is_null()) return "";
  if (e->is_string()) return e->as_string();
  if (const Json* m = e->find("message"); m != nullptr && m->is_string()) return m->as_string();
  return e->dump();
}

// One line about an event: the field a reader looks for first, by type.
std::string summarize(const memory::Event& e) {
  namespace t = memory::event_type;
  const Json& p = e.payload;
  if (e.type == t::kToolCall) {
    const Json* name = p.find("name");
    std::string s = name != nullptr && name->is_string() ? name->as_string() : "";
    return s + (s.empty() ? "" : " ") + compact(p.find("arguments"));
  }
  if (e.type == t::kToolResult) {
    std::string err = error_of(p, "error");
    if (!err.empty()) return "error: " + err;
    return compact(p.find("result") != nullptr ? p.find("result") : p.find("output"));
  }
  if (e.type == t::kModelCall || e.type == t::kStepCompleted) return compact(p.find("output"));
  if (e.type == t::kStepFailed || e.type == t::kRunFailed) return error_of(p, "error");
  if (e.type == t::kRunCancelled) return error_of(p, "reason");
  if (e.type == t::kRunCompleted) return compact(p.find("outputs"));
  if (e.type == t::kRunStarted) return compact(p.find("inputs"));
  return p.is_object() && p.size() == 0 ? "" : p.dump();
}

// The records with the run's secret `env` values replaced, as trace export does (trace.h).
void redact_records(memory::Run& run, std::vector<memory::StepRecord>& steps, std::vector<memory::Event>& events) {
  const Secrets secrets = runtime::run_secrets(events);
  if (secrets.empty()) return;
  auto text = [&secrets](std::string& s) { s = runtime::redact(Json(s), secrets).as_string(); };
  run.inputs = runtime::redact(run.inputs, secrets);
  run.outputs = runtime::redact(run.outputs, secrets);
  text(run.error);
  for (auto& st : steps) {
    st.output = runtime::redact(st.output, secrets);
    text(st.error);
  }
  for (auto& e : events) e.payload = runtime::redact(e.payload, secrets);
}

int runs_list(const std::vector<std::string>& args) {
  ArgParser parser = list_parser();
  auto parsed = parser.parse(args, 0, 0);
  if (parser.help_requested()) { std::fputs(parser.usage().c_str(), stdout); return kExitOk; }
  if (!parsed.ok()) return usage_error("runs list", parsed.status().message());
  const ParsedArgs& a = *parsed;
  memory::RunFilter filter;
  if (auto s = a.get("status")) {
    filter.status = memory::parse_run_status(*s);
    if (!filter.status) {
      return usage_error("runs list", "--status: unknown status '" + *s + "' (running, completed, failed, cancelled)");
    }
  }
  filter.workflow = a.get("workflow").value_or("");
  auto limit = a.get_int("limit", 50, 0, INT64_MAX);
  if (!limit.ok()) return usage_error("runs list", limit.status().message());
  filter.limit = *limit;
  int code = kExitOk;
  auto store = open_store("runs list", a, &code);
  if (!store) return code;
  auto runs = store->list_runs(filter);
  if (!runs.ok()) {
    std::fprintf(stderr, "dloop runs list: %s\n", runs.status().message().c_str());
    return kExitFailed;
  }
  for (auto& r : *runs) {  // each run's secrets are in its first event (run_started)
    auto first = store->events(r.id, 0, 1);
    std::vector<memory::StepRecord> no_steps;
    if (first.ok()) redact_records(r, no_steps, *first);
  }
  if (a.has("json")) {
    Json list = Json::array();
    for (const auto& r : *runs) list.push_back(memory::to_json(r));
    Json out = Json::object();
    out.set("runs", std::move(list));
    std::printf("%s\n", out.dump(Json::Style::kPretty).c_str());
    return kExitOk;
  }
  if (runs->empty()) {
    std::printf("no runs\n");
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : *runs) {
    rows.push_back({r.id, memory::run_status_name(r.status), cell(r.workflow, 32), short_time(r.created_at),
                    short_time(r.updated_at), std::to_string(r.last_seq)});
  }
  print_table({"ID", "STATUS", "WORKFLOW", "CREATED", "UPDATED", "EVENTS"}, rows);
  return kExitOk;
}

void print_run(const memory::Run& r) {
  auto field = [](const char* name, const std::string& value) {
    if (!value.empty()) std::printf("%-10s%s\n", name, value.c_str());
  };
  field("run", r.id);
  field("workflow", r.workflow);
  field("file", r.workflow_path);
  field("hash", r.workflow_hash);
  field("status", memory::run_status_name(r.status));
  field("created", short_time(r.created_at) + " UTC");
  field("updated", short_time(r.updated_at) + " UTC");
  field("inputs", cell(r.inputs.dump(), 200));
  field("outputs", r.outputs.is_null() ? "" : cell(r.outputs.dump(), 200));
  field("error", cell(r.error, 200));
}

void print_show_json(const memory::Run& run, const std::vector<memory::StepRecord>& steps,
                     const std::vector<memory::Event>& events) {
  Json out = Json::object();
  out.set("run", memory::to_json(run));
  Json s = Json::array();
  for (const auto& step : steps) s.push_back(memory::to_json(step));
  out.set("steps", std::move(s));
  Json e = Json::array();
  for (const auto& ev : events) e.push_back(memory::to_json(ev));
  out.set("events", std::move(e));
  std::printf("%s\n", out.dump(Json::Style::kPretty).c_str());
}

void print_show_text(const memory::Run& run, const std::vector<memory::StepRecord>& steps,
                     const std::vector<memory::Event>& events) {
  print_run(run);
  if (!steps.empty()) {
    std::printf("\nsteps:\n");
    std::vector<std::vector<std::string>> rows;
    for (const auto& s : steps) {
      std::string result = s.status == memory::StepStatus::kFailed ? s.error
                                                                   : (s.output.is_null() ? "" : s.output.dump());
      rows.push_back({cell(s.step_path, 40), memory::step_status_name(s.status), std::to_string(s.attempts),
                      cell(result, 60)});
    }
    print_table({"STEP", "STATUS", "ATTEMPTS", "OUTPUT/ERROR"}, rows, "  ");
  }
  std::printf("\nevents:\n");
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : events) {
    std::string at = e.attempt || e.turn ? std::to_string(e.attempt) + "/" + std::to_string(e.turn) : "";
    std::string time = e.ts.size() >= 23 ? e.ts.substr(11, 12) : e.ts;
    rows.push_back({std::to_string(e.seq), time, e.type, cell(e.step_path, 32), at, cell(summarize(e), 72)});
  }
  print_table({"SEQ", "TIME", "TYPE", "STEP", "ATT/TURN", "SUMMARY"}, rows, "  ");
}

int runs_show(const std::vector<std::string>& args) {
  ArgParser parser = show_parser();
  auto parsed = parser.parse(args, 1, 1);
  if (parser.help_requested()) { std::fputs(parser.usage().c_str(), stdout); return kExitOk; }
  if (!parsed.ok()) return usage_error("runs show", parsed.status().message());
  const ParsedArgs& a = *parsed;
  const std::string id = a.positional()[0];
  int code = kExitOk;
  auto store = open_store("runs show", a, &code);
  if (!store) return code;
  auto run = store->get_run(id);
  if (!run.ok()) {
    if (run.status().code() == base::Code::kNotFound) {
      std::fprintf(stderr, "dloop runs show: no run '%s' in '%s' (see 'dloop runs list')\n", id.c_str(),
                   store->path().c_str());
      return kExitUsage;
    }
    std::fprintf(stderr, "dloop runs show: %s\n", run.status().message().c_str());
    return kExitFailed;
  }
  auto steps = store->steps(id);
  auto events = store->events(id);
  for (const base::Status& st : {steps.status(), events.status()}) {
    if (!st.ok()) {
      std::fprintf(stderr, "dloop runs show: %s\n", st.message().c_str());
      return kExitFailed;
    }
  }
  redact_records(*run, *steps, *events);
  if (a.has("json")) {
    print_show_json(*run, *steps, *events);
  } else {
    print_show_text(*run, *steps, *events);
  }
  return kExitOk;
}

}  // namespace

int cmd_runs(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(kRunsUsage, stderr);
    return kExitUsage;
  }
  const std::string& sub = args[0];
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::fputs(kRunsUsage, stdout);
    return kExitOk;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (sub == "list" || sub == "ls") return runs_list(rest);
  if (sub == "show") return runs_show(rest);
  if (sub == "diff") return runs_diff(rest);
  std::string msg = "unknown subcommand '" + sub + "'";
  if (auto close = base::closest_match(sub, {"list", "show", "diff"})) msg += " (did you mean '" + *close + "'?)";
  std::fprintf(stderr, "dloop runs: %s\n%s", msg.c_str(), kRunsUsage);
  return kExitUsage;
}

}  // namespace dloop::cli
