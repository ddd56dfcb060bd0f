// ReplayLog: the record lookups and the comparisons of a replay; see replay.h. The model and tool
// hooks that consult it are RunContext::ask_model and RunContext::call_tool (replay_hooks.cpp).
#include "dloop/runtime/replay.h"

#include <algorithm>

namespace dloop::runtime {

using base::Json;
namespace et = memory::event_type;

namespace {

constexpr size_t kMaxShown = 400;

std::string shown(const std::string& text) {
  if (text.size() <= kMaxShown) return text;
  return text.substr(0, kMaxShown) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

bool is_checked_type(const std::string& type) {
  return type == et::kStepStarted || type == et::kModelCall || type == et::kToolCall || type == et::kToolResult ||
         type == et::kStepCompleted || type == et::kStepFailed || type == et::kStepSkipped;
}

bool is_terminal(const std::string& type) {
  return type == et::kRunCompleted || type == et::kRunFailed || type == et::kRunCancelled;
}

std::string step_error_text(const Json& payload) {
  const Json* e = payload.find("error");
  if (!e) return "";
  const Json* m = e->find("message");
  const Json* c = e->find("code");
  std::string out = c && c->is_string() ? c->as_string() + ": " : "";
  return out + (m && m->is_string() ? m->as_string() : e->dump());
}

std::string terminal_text(const memory::Event& e) {
  if (e.type == et::kRunCompleted) return "completed";
  const Json* err = e.payload.find(e.type == et::kRunFailed ? "error" : "reason");
  std::string word = e.type == et::kRunFailed ? "failed" : "cancelled";
  return err && err->is_string() ? word + ": " + err->as_string() : word;
}

}  // namespace

bool first_difference(const Json& expected, const Json& got, const std::string& path, std::string* where,
                      std::string* a, std::string* b) {
  if (expected.type() != got.type() && !(expected.is_number() && got.is_number())) {
    *where = path;
    *a = expected.dump();
    *b = got.dump();
    return true;
  }
  if (expected.is_object()) {
    for (const auto& [key, value] : expected.as_object()) {
      const Json* other = got.find(key);
      if (!other) {
        *where = join(path, key);
        *a = value.dump();
        *b = "(absent)";
        return true;
      }
      if (first_difference(value, *other, join(path, key), where, a, b)) return true;
    }
    for (const auto& [key, value] : got.as_object()) {
      if (!expected.find(key)) {
        *where = join(path, key);
        *a = "(absent)";
        *b = value.dump();
        return true;
      }
    }
    return false;
  }
  if (expected.is_array()) {
    const auto& x = expected.as_array();
    const auto& y = got.as_array();
    for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
      if (first_difference(x[i], y[i], path + "[" + std::to_string(i) + "]", where, a, b)) return true;
    }
    if (x.size() == y.size()) return false;
    const size_t i = std::min(x.size(), y.size());
    *where = path + "[" + std::to_string(i) + "]";
    *a = i < x.size() ? x[i].dump() : "(absent: " + std::to_string(x.size()) + " items)";
    *b = i < y.size() ? y[i].dump() : "(absent: " + std::to_string(y.size()) + " items)";
    return true;
  }
  if (expected == got) return false;
  *where = path;
  *a = expected.dump();
  *b = got.dump();
  return true;
}

std::string Divergence::report() const {
  std::string place = step_path.empty() ? std::string("the run") : "step '" + step_path + "'";
  if (!step_path.empty()) {
    place += " (attempt " + std::to_string(attempt);
    if (turn > 0) place += ", turn " + std::to_string(turn);
    place += ")";
  }
  std::string out = "divergence at " + place + ": " + what;
  if (!field.empty()) out += " differs at " + field;
  out += "\n  expected: " + shown(expected) + "\n  got:      " + shown(got) + "\n";
  return out;
}

ReplayLog::ReplayLog(memory::Run run, std::vector<memory::Event> events, Mode mode)
    : mode_(mode), run_(std::move(run)), events_(std::move(events)) {
  for (size_t i = 0; i < events_.size(); ++i) {
    const auto& e = events_[i];
    index_.emplace(Key{e.step_path, e.attempt, e.type, e.ordinal}, i);
    if (e.type == et::kRunStarted) {
      started_at_ = e.ts;
      if (const Json* env = e.payload.find("env"); env && env->is_object()) env_ = *env;
    }
  }
}

const memory::Event* ReplayLog::take(const std::string& step_path, int64_t attempt, std::string_view type,
                                     int64_t ordinal) {
  Key key{step_path, attempt, std::string(type), ordinal};
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  reached_.insert(std::move(key));
  return &events_[it->second];
}

std::optional<std::string> ReplayLog::recorded_failure(const std::string& step_path, int64_t attempt,
                                                       std::string_view code) const {
  auto it = index_.find(Key{step_path, attempt, std::string(et::kStepFailed), 0});
  if (it == index_.end()) return std::nullopt;
  const Json* e = events_[it->second].payload.find("error");
  const Json* c = e ? e->find("code") : nullptr;
  const Json* m = e ? e->find("message") : nullptr;
  if (!c || !c->is_string() || c->as_string() != code || !m || !m->is_string()) return std::nullopt;
  return m->as_string();
}

int64_t ReplayLog::next_ordinal(const std::string& step_path, int64_t attempt, std::string_view type) {
  return ordinals_[{step_path, attempt, std::string(type)}]++;
}

void ReplayLog::diverge(Divergence d) {
  if (!strict()) {
    changes_.push_back(std::move(d));
    return;
  }
  if (!divergence_) divergence_ = std::move(d);
}

void ReplayLog::check_event(const memory::NewEvent& e) {
  if (stopped() || !is_checked_type(e.type) || e.type == et::kModelCall || e.type == et::kToolCall ||
      e.type == et::kToolResult) {
    return;
  }
  const int64_t ordinal = next_ordinal(e.step_path, e.attempt, e.type);
  const memory::Event* rec = take(e.step_path, e.attempt, e.type, ordinal);
  auto peek = [&](std::string_view type, int64_t attempt) -> const memory::Event* {
    auto it = index_.find(Key{e.step_path, attempt, std::string(type), 0});
    return it == index_.end() ? nullptr : &events_[it->second];
  };
  Divergence d;
  d.step_path = e.step_path;
  d.attempt = e.attempt;
  std::string where, a, b;
  if (e.type == et::kStepStarted) {
    if (rec) {
      if (first_difference(rec->payload, e.payload, "", &where, &a, &b)) {
        d.what = "step kind";
        d.field = where;
        d.expected = a;
        d.got = b;
        diverge(std::move(d));
      }
      return;
    }
    d.what = "step started";
    if (peek(et::kStepSkipped, 0)) {
      d.expected = "the step was skipped (its condition was false)";
    } else if (e.attempt > 1 && peek(et::kStepStarted, e.attempt - 1)) {
      d.expected = "no attempt " + std::to_string(e.attempt) + " (attempt " + std::to_string(e.attempt - 1) +
                   " ended the step)";
    } else {
      d.expected = "no such step in the record";
    }
    d.got = "attempt " + std::to_string(e.attempt) + " started";
  } else if (e.type == et::kStepCompleted) {
    const Json* out = e.payload.find("output");
    if (rec) {
      const Json* recorded = rec->payload.find("output");
      if (first_difference(recorded ? *recorded : Json(), out ? *out : Json(), "output", &where, &a, &b)) {
        d.what = "step output";
        d.field = where;
        d.expected = a;
        d.got = b;
        diverge(std::move(d));
      }
      return;
    }
    d.what = "step outcome";
    const memory::Event* failed = peek(et::kStepFailed, e.attempt);
    d.expected = failed ? "failed: " + step_error_text(failed->payload) : "no outcome (the record stops before it)";
    d.got = "completed with output " + (out ? out->dump() : std::string("null"));
  } else if (e.type == et::kStepFailed) {
    if (rec) {
      const std::string x = step_error_text(rec->payload), y = step_error_text(e.payload);
      if (x != y) {
        d.what = "step error";
        d.expected = x;
        d.got = y;
        diverge(std::move(d));
      }
      return;
    }
    d.what = "step outcome";
    const memory::Event* done = peek(et::kStepCompleted, e.attempt);
    const Json* out = done ? done->payload.find("output") : nullptr;
    d.expected = done ? "completed with output " + (out ? out->dump() : std::string("null"))
                      : "no outcome (the record stops before it)";
    d.got = "failed: " + step_error_text(e.payload);
  } else {  // step_skipped
    if (rec) return;
    d.what = "step skipped";
    d.expected = peek(et::kStepStarted, 1) ? "the step ran (attempt 1 started)" : "no such step in the record";
    d.got = "skipped (its condition is false)";
  }
  diverge(std::move(d));
}

void ReplayLog::check_finish(memory::RunStatus status, const Json& outputs, const std::string& error) {
  if (stopped()) return;
  const std::string got = status == memory::RunStatus::kCompleted ? std::string("completed")
                          : std::string(memory::run_status_name(status)) + ": " + error;
  if (strict()) {
    for (const auto& e : events_) {
      if (!is_checked_type(e.type) || reached_.count(Key{e.step_path, e.attempt, e.type, e.ordinal})) continue;
      Divergence d;
      d.step_path = e.step_path;
      d.attempt = e.attempt;
      d.turn = e.turn;
      d.what = "recorded " + e.type + " never reached";
      d.expected = e.type + " (seq " + std::to_string(e.seq) + ")";
      d.got = "the re-execution ended (" + got + ") without it";
      diverge(std::move(d));
      return;
    }
  }
  const memory::Event* terminal = nullptr;
  for (const auto& e : events_) {
    if (is_terminal(e.type)) terminal = &e;
  }
  Divergence d;
  if (!terminal) {
    d.what = "run outcome";
    d.expected = "no outcome (the recorded run had not ended)";
    d.got = got;
    diverge(std::move(d));
    return;
  }
  const std::string expected = terminal_text(*terminal);
  if (terminal->type == et::kRunCompleted && status == memory::RunStatus::kCompleted) {
    const Json* rec = terminal->payload.find("outputs");
    std::string where, a, b;
    if (first_difference(rec ? *rec : Json::object(), outputs, "outputs", &where, &a, &b)) {
      d.what = "run outputs";
      d.field = where;
      d.expected = a;
      d.got = b;
      diverge(std::move(d));
    }
    return;
  }
  if (expected != got) {
    d.what = "run outcome";
    d.expected = expected;
    d.got = got;
    diverge(std::move(d));
  }
}

}  // namespace dloop::runtime
