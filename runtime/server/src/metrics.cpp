// Metrics bookkeeping and the Prometheus text writer; see metrics.h.
#include "dloop/server/metrics.h"

#include "dloop/base/json.h"

namespace dloop::server {

void Metrics::observe_request(const std::string& route, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  Histogram& h = requests_[{route, status}];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++h.buckets[i];
  }
  ++h.count;
  h.sum += seconds;
}

void Metrics::add_tokens(int64_t prompt, int64_t completion) {
  std::lock_guard<std::mutex> lock(mutex_);
  prompt_tokens_ += prompt;
  completion_tokens_ += completion;
}

void Metrics::add_forward_passes(int64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  forward_passes_ += n;
}

void Metrics::add_tool_calls(int64_t n, const char* source) {
  std::lock_guard<std::mutex> lock(mutex_);
  tool_calls_[source] += n;
}

void Metrics::add_generation(int delta) {
  std::lock_guard<std::mutex> lock(mutex_);
  generations_ += delta;
}

void Metrics::add_run(int delta) {
  std::lock_guard<std::mutex> lock(mutex_);
  runs_ += delta;
}

void Metrics::add_rejected(const char* reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++rejected_[reason];
}

int Metrics::active_generations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return generations_;
}

int Metrics::active_runs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return runs_;
}

namespace {

// A label value: backslash, double quote and newline escaped (the exposition format's rules).
std::string label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

}  // namespace

std::string Metrics::prometheus_text() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  header(out, "dloop_http_requests_total", "counter", "HTTP requests answered, by route and status.");
  for (const auto& [key, h] : requests_) {
    out.append("dloop_http_requests_total{route=\"").append(label(key.first)).append("\",status=\"")
        .append(std::to_string(key.second)).append("\"} ").append(std::to_string(h.count)).append("\n");
  }
  header(out, "dloop_http_request_duration_seconds", "histogram",
         "Time from the end of the request head to the last byte of the answer, by route and status.");
  for (const auto& [key, h] : requests_) {
    const std::string labels = std::string("route=\"").append(label(key.first)).append("\",status=\"")
                                   .append(std::to_string(key.second)).append("\"");
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      out.append("dloop_http_request_duration_seconds_bucket{").append(labels).append(",le=\"")
          .append(base::format_double(kBuckets[i])).append("\"} ").append(std::to_string(h.buckets[i])).append("\n");
    }
    out.append("dloop_http_request_duration_seconds_bucket{").append(labels).append(",le=\"+Inf\"} ")
        .append(std::to_string(h.count)).append("\n");
    out.append("dloop_http_request_duration_seconds_sum{").append(labels).append("} ")
        .append(base::format_double(h.sum)).append("\n");
    out.append("dloop_http_request_duration_seconds_count{").append(labels).append("} ")
        .append(std::to_string(h.count)).append("\n");
  }
  header(out, "dloop_tokens_total", "counter", "Tokens processed by chat completions, by kind.");
  out.append("dloop_tokens_total{kind=\"prompt\"} ").append(std::to_string(prompt_tokens_)).append("\n");
  out.append("dloop_tokens_total{kind=\"completion\"} ").append(std::to_string(completion_tokens_)).append("\n");
  header(out, "dloop_forward_passes_total", "counter", "Model forward passes run for chat completions.");
  out.append("dloop_forward_passes_total ").append(std::to_string(forward_passes_)).append("\n");
  header(out, "dloop_tool_calls_total", "counter", "Tool calls made by the model, by source (completion or run).");
  for (const char* source : {"completion", "run"}) {
    auto it = tool_calls_.find(source);
    out.append("dloop_tool_calls_total{source=\"").append(source).append("\"} ")
        .append(std::to_string(it == tool_calls_.end() ? 0 : it->second)).append("\n");
  }
  header(out, "dloop_rejected_requests_total", "counter", "Requests refused with 429 or 503, by reason.");
  for (const auto& [reason, n] : rejected_) {
    out.append("dloop_rejected_requests_total{reason=\"").append(label(reason)).append("\"} ")
        .append(std::to_string(n)).append("\n");
  }
  header(out, "dloop_active_generations", "gauge", "Chat completions queued or running.");
  out.append("dloop_active_generations ").append(std::to_string(generations_)).append("\n");
  header(out, "dloop_active_runs", "gauge", "Workflow runs executing in this server.");
  out.append("dloop_active_runs ").append(std::to_string(runs_)).append("\n");
  return out;
}

}  // namespace dloop::server
