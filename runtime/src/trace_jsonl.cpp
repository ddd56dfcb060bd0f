// The JSONL trace format (trace.h, docs/traces.md): writing with redaction, and a reader that
// names the line of every problem. Pure functions; thread-safe.
#include <ctime>

#include "dloop/runtime/trace.h"

namespace dloop::runtime {

using base::Json;
using base::Result;

namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  size_t pos = 0;
  while ((pos = text.find(from, pos)) != std::string::npos) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

Json header_json(const memory::Run& run, int64_t events, const std::vector<std::string>& redacted) {
  Json r = Json::object();
  r.set("id", run.id);
  r.set("workflow", run.workflow);
  r.set("workflow_path", run.workflow_path);
  r.set("workflow_hash", run.workflow_hash);
  r.set("inputs", run.inputs);
  r.set("status", memory::run_status_name(run.status));
  r.set("outputs", run.outputs);
  r.set("error", run.error);
  r.set("created_at", run.created_at);
  r.set("updated_at", run.updated_at);
  Json h = Json::object();
  h.set("dloop_trace", kTraceFormatVersion);
  h.set("run", std::move(r));
  h.set("events", events);
  Json names = Json::array();
  for (const auto& n : redacted) names.push_back(n);
  h.set("redacted", std::move(names));
  return h;
}

// A line's field of the wanted type, or an error naming line and field.
class LineReader {
 public:
  LineReader(const Json& obj, std::string where) : obj_(obj), where_(std::move(where)) {}
  Result<std::string> str(std::string_view key, bool required = true) const {
    const Json* v = obj_.find(key);
    if (!v) {
      if (!required) return std::string();
      return bad(key, "is missing");
    }
    if (!v->is_string()) return bad(key, "must be a string");
    return v->as_string();
  }
  Result<int64_t> integer(std::string_view key, int64_t min) const {
    const Json* v = obj_.find(key);
    if (!v) return bad(key, "is missing");
    if (!v->is_int()) return bad(key, "must be an integer");
    if (v->as_int() < min) return bad(key, "must be >= " + std::to_string(min));
    return v->as_int();
  }
  Result<Json> any(std::string_view key, bool required = true) const {
    const Json* v = obj_.find(key);
    if (!v) {
      if (!required) return Json();
      return bad(key, "is missing");
    }
    return *v;
  }
  base::Status bad(std::string_view key, const std::string& what) const {
    return base::invalid_argument(where_ + ": field '" + std::string(key) + "' " + what);
  }

 private:
  const Json& obj_;
  std::string where_;
};

}  // namespace

std::vector<std::pair<std::string, std::string>> run_secrets(const std::vector<memory::Event>& events) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : events) {
    if (e.type != memory::event_type::kRunStarted) continue;
    const Json* env = e.payload.find("env");
    const Json* names = e.payload.find("secret_env");
    if (!env || !names || !names->is_array()) continue;
    for (const Json& n : names->as_array()) {
      if (!n.is_string()) continue;
      const Json* v = env->find(n.as_string());
      if (v && v->is_string() && !v->as_string().empty()) out.emplace_back(n.as_string(), v->as_string());
    }
  }
  return out;
}

Json redact(const Json& value, const std::vector<std::pair<std::string, std::string>>& secrets) {
  if (secrets.empty()) return value;
  if (value.is_string()) {
    std::string s = value.as_string();
    for (const auto& [name, secret] : secrets) s = replace_all(std::move(s), secret, "[REDACTED:" + name + "]");
    return Json(std::move(s));
  }
  if (value.is_array()) {
    Json out = Json::array();
    for (const Json& v : value.as_array()) out.push_back(redact(v, secrets));
    return out;
  }
  if (value.is_object()) {
    Json out = Json::object();
    for (const auto& [k, v] : value.as_object()) out.set(k, redact(v, secrets));
    return out;
  }
  return value;
}

std::string trace_jsonl(const memory::Run& run, const std::vector<memory::Event>& events) {
  const auto secrets = run_secrets(events);
  std::vector<std::string> names;
  for (const auto& s : secrets) names.push_back(s.first);
  std::string out = redact(header_json(run, static_cast<int64_t>(events.size()), names), secrets).dump();
  out += '\n';
  for (const auto& e : events) {
    Json j = Json::object();
    j.set("seq", e.seq);
    j.set("type", e.type);
    j.set("step", e.step_path);
    j.set("attempt", e.attempt);
    j.set("turn", e.turn);
    j.set("ordinal", e.ordinal);
    j.set("ts", e.ts);
    j.set("payload", redact(e.payload, secrets));
    out += j.dump();
    out += '\n';
  }
  return out;
}

Result<Trace> parse_trace_jsonl(std::string_view text, const std::string& source) {
  Trace t;
  int64_t announced = -1;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const bool last = end == std::string_view::npos;
    std::string_view line = text.substr(pos, last ? std::string_view::npos : end - pos);
    pos = last ? text.size() : end + 1;
    ++line_no;
    const std::string where = source + ":" + std::to_string(line_no);
    if (line.empty()) return base::invalid_argument(where + ": empty line (one JSON object per line)");
    auto parsed = Json::parse(line);
    if (!parsed.ok()) {
      std::string hint = last && line_no > 1 ? " (the file may be truncated)" : "";
      return base::invalid_argument(where + ": not valid JSON: " + parsed.status().message() + hint);
    }
    if (!parsed->is_object()) return base::invalid_argument(where + ": expected a JSON object");
    LineReader r(*parsed, where);
    if (line_no == 1) {
      const Json* version = parsed->find("dloop_trace");
      if (!version) return base::invalid_argument(where + ": not a dloop trace (no 'dloop_trace' header)");
      DLOOP_ASSIGN_OR_RETURN(int64_t v, r.integer("dloop_trace", 1));
      if (v > kTraceFormatVersion) {
        return base::invalid_argument(where + ": trace format version " + std::to_string(v) +
                                      " is newer than this dloop reads (" + std::to_string(kTraceFormatVersion) +
                                      ")");
      }
      DLOOP_ASSIGN_OR_RETURN(announced, r.integer("events", 1));
      DLOOP_ASSIGN_OR_RETURN(Json run, r.any("run"));
      if (!run.is_object()) return r.bad("run", "must be an object");
      LineReader rr(run, where + ": run");
      DLOOP_ASSIGN_OR_RETURN(t.run.id, rr.str("id"));
      DLOOP_ASSIGN_OR_RETURN(t.run.workflow, rr.str("workflow"));
      DLOOP_ASSIGN_OR_RETURN(t.run.workflow_path, rr.str("workflow_path", false));
      DLOOP_ASSIGN_OR_RETURN(t.run.workflow_hash, rr.str("workflow_hash", false));
      DLOOP_ASSIGN_OR_RETURN(t.run.inputs, rr.any("inputs", false));
      if (t.run.inputs.is_null()) t.run.inputs = Json::object();
      DLOOP_ASSIGN_OR_RETURN(std::string status, rr.str("status"));
      auto st = memory::parse_run_status(status);
      if (!st) return rr.bad("status", "must be running, completed, failed or cancelled");
      t.run.status = *st;
      DLOOP_ASSIGN_OR_RETURN(t.run.outputs, rr.any("outputs", false));
      DLOOP_ASSIGN_OR_RETURN(t.run.error, rr.str("error", false));
      DLOOP_ASSIGN_OR_RETURN(t.run.created_at, rr.str("created_at", false));
      DLOOP_ASSIGN_OR_RETURN(t.run.updated_at, rr.str("updated_at", false));
      if (const Json* names = parsed->find("redacted"); names && names->is_array()) {
        for (const Json& n : names->as_array()) {
          if (n.is_string()) t.redacted.push_back(n.as_string());
        }
      }
      continue;
    }
    memory::Event e;
    e.run_id = t.run.id;
    DLOOP_ASSIGN_OR_RETURN(e.seq, r.integer("seq", 1));
    const int64_t want = static_cast<int64_t>(t.events.size()) + 1;
    if (e.seq != want) {
      return base::invalid_argument(where + ": event seq " + std::to_string(e.seq) + " where " +
                                    std::to_string(want) + " was expected (events are numbered 1..n)");
    }
    if (e.seq > announced) {
      return base::invalid_argument(where + ": more events than the header announces (" +
                                    std::to_string(announced) + ")");
    }
    DLOOP_ASSIGN_OR_RETURN(e.type, r.str("type"));
    if (e.type.empty()) return r.bad("type", "must not be empty");
    if (e.seq == 1 && e.type != memory::event_type::kRunStarted) return r.bad("type", "of event 1 must be run_started");
    DLOOP_ASSIGN_OR_RETURN(e.step_path, r.str("step", false));
    DLOOP_ASSIGN_OR_RETURN(e.attempt, r.integer("attempt", 0));
    DLOOP_ASSIGN_OR_RETURN(e.turn, r.integer("turn", 0));
    DLOOP_ASSIGN_OR_RETURN(e.ordinal, r.integer("ordinal", 0));
    DLOOP_ASSIGN_OR_RETURN(e.ts, r.str("ts"));
    if (parse_iso_ms(e.ts) < 0) return r.bad("ts", "must be an ISO-8601 UTC time like 2026-12-02T13:28:50.123Z");
    DLOOP_ASSIGN_OR_RETURN(e.payload, r.any("payload"));
    if (!e.payload.is_object()) return r.bad("payload", "must be an object");
    t.events.push_back(std::move(e));
  }
  if (line_no == 0) return base::invalid_argument(source + ": empty file (not a dloop trace)");
  if (static_cast<int64_t>(t.events.size()) != announced) {
    return base::invalid_argument(source + ": truncated: the header announces " + std::to_string(announced) +
                                  " events, the file has " + std::to_string(t.events.size()) + " (it ends at line " +
                                  std::to_string(line_no) + ")");
  }
  if (t.run.created_at.empty()) t.run.created_at = t.events.front().ts;
  if (t.run.updated_at.empty()) t.run.updated_at = t.events.back().ts;
  t.run.last_seq = static_cast<int64_t>(t.events.size());
  return t;
}

int64_t parse_iso_ms(std::string_view iso) {
  // 2026-12-02T13:28:50.123Z
  if (iso.size() != 24 || iso[4] != '-' || iso[7] != '-' || iso[10] != 'T' || iso[13] != ':' || iso[16] != ':' ||
      iso[19] != '.' || iso[23] != 'Z') {
    return -1;
  }
  auto num = [&](size_t at, size_t len) -> int {
    int v = 0;
    for (size_t i = at; i < at + len; ++i) {
      if (iso[i] < '0' || iso[i] > '9') return -1;
      v = v * 10 + (iso[i] - '0');
    }
    return v;
  };
  std::tm tm{};
  tm.tm_year = num(0, 4) - 1900;
  tm.tm_mon = num(5, 2) - 1;
  tm.tm_mday = num(8, 2);
  tm.tm_hour = num(11, 2);
  tm.tm_min = num(14, 2);
  tm.tm_sec = num(17, 2);
  const int ms = num(20, 3);
  if (tm.tm_year < 0 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour < 0 ||
      tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 || tm.tm_sec > 60 || ms < 0) {
    return -1;
  }
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

}  // namespace dloop::runtime
