// Spans of the conversation; see spans.h.
#include "spans.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

namespace dloop::engine::toolcall {

bool span_separator(char c) {
  return std::isspace(static_cast<unsigned char>(c)) || std::strchr("\"'`()[]{}<>,;:=|", c);
}

bool span_start(std::string_view text, size_t i) { return i == 0 || span_separator(text[i - 1]); }

bool span_end(std::string_view text, size_t j) {
  if (j == text.size() || span_separator(text[j])) return true;
  return std::strchr(".?!", text[j]) && (j + 1 == text.size() || span_separator(text[j + 1]));
}

size_t whole_occurrences(std::string_view text, std::string_view value) {
  if (value.empty()) return 0;
  size_t n = 0;
  for (size_t at = text.find(value); at != std::string_view::npos; at = text.find(value, at + 1)) {
    if (span_start(text, at) && span_end(text, at + value.size())) ++n;
  }
  return n;
}

bool plain_number(std::string_view t, bool integer) {
  if (!t.empty() && t[0] == '-') t.remove_prefix(1);
  const size_t dot = t.find('.');
  const std::string_view whole = t.substr(0, dot);
  if (whole.empty() || (whole.size() > 1 && whole[0] == '0')) return false;
  auto digits = [](std::string_view d) {
    return std::all_of(d.begin(), d.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
  };
  if (!digits(whole)) return false;
  if (dot == std::string_view::npos) return true;
  const std::string_view frac = t.substr(dot + 1);
  return !integer && !frac.empty() && digits(frac);
}

std::string conversation_text(std::string_view text) {
  static constexpr std::string_view kStart = "<|im_start|>", kEnd = "<|im_end|>";
  if (text.find(kStart) == std::string_view::npos) return std::string(text);
  std::string out;
  for (size_t at = text.find(kStart); at != std::string_view::npos;) {
    const size_t body = at + kStart.size();
    const size_t next = text.find(kStart, body);
    std::string_view turn = text.substr(body, (next == std::string_view::npos ? text.size() : next) - body);
    if (const size_t end = turn.find(kEnd); end != std::string_view::npos) turn = turn.substr(0, end);
    const size_t role_end = turn.find('\n');
    if (!turn.starts_with("system") && role_end != std::string_view::npos) {
      out += '\n';
      out += turn.substr(role_end + 1);
    }
    at = next;
  }
  return out;
}

std::vector<std::string> conversation_spans(std::string_view text, size_t max_words, size_t max_bytes) {
  std::vector<std::vector<std::string>> by_words(max_words);
  std::set<std::string, std::less<>> seen;
  for (size_t i = 0; i < text.size(); ++i) {
    if (span_separator(text[i]) || !span_start(text, i)) continue;
    size_t words = 1;
    for (size_t j = i + 1; j <= text.size() && j - i <= max_bytes; ++j) {
      const char last = text[j - 1];
      if (last == ' ') {
        // Words are joined by one space; a double space or the end of a sentence ends the span.
        if (text[j - 2] == ' ' || std::strchr(".?!", text[j - 2]) || ++words > max_words) break;
        continue;
      }
      // Line breaks, tabs, quotes, brackets, commas, semicolons and bars end it.
      if (std::isspace(static_cast<unsigned char>(last)) || std::strchr("\"`()[]{}<>,;|", last)) break;
      if (span_separator(last) || std::strchr(".?!,;:", last) || !span_end(text, j)) continue;
      std::string_view s = text.substr(i, j - i);
      if (seen.insert(std::string(s)).second) by_words[words - 1].emplace_back(s);
    }
  }
  std::vector<std::string> out;
  for (auto& v : by_words) {
    for (auto& s : v) out.push_back(std::move(s));
  }
  return out;
}

namespace {

bool ascii_upper(char c) { return c >= 'A' && c <= 'Z'; }

// The end of the sentence-bounded run of capitalised words after a word ending at j: each next
// word follows one space, starts with an ASCII capital and ends at a span end.
size_t capitalised_run(std::string_view text, size_t j) {
  while (j + 1 < text.size() && text[j] == ' ' && ascii_upper(text[j + 1])) {
    size_t k = j + 1;
    while (k < text.size() && !span_end(text, k)) ++k;
    j = k;
  }
  return j;
}

}  // namespace

std::string_view unit_at(std::string_view text, size_t at) {
  if (at >= text.size()) return {};
  const char q = text[at];
  if (q == '"' || q == '\'') {
    for (size_t k = at + 1; k < text.size() && text[k] != '\n'; ++k) {
      if (text[k] == q) return text.substr(at + 1, k - at - 1);
    }
    return {};
  }
  if (span_separator(q)) return {};
  size_t end = at + 1;
  for (;;) {
    while (!span_end(text, end)) ++end;
    // A colon between digits stays inside (a time of day: 22:50).
    if (end + 1 < text.size() && text[end] == ':' && std::isdigit(static_cast<unsigned char>(text[end - 1])) &&
        std::isdigit(static_cast<unsigned char>(text[end + 1]))) {
      end += 2;
      continue;
    }
    break;
  }
  if (ascii_upper(q)) end = capitalised_run(text, end);
  return text.substr(at, end - at);
}

namespace {

bool clean_value(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\'; });
}

}  // namespace

std::vector<std::string> span_completions(std::string_view text, std::string_view value, size_t max_bytes) {
  std::vector<std::string> out;
  if (value.empty()) return out;
  // Quoted strings: [first, second) is the text between an opening quote (after a separator,
  // before a word) and the same quote after a word's end on the same line.
  std::vector<std::pair<size_t, size_t>> quotes;
  for (size_t p = 0; p + 1 < text.size(); ++p) {
    const char q = text[p];
    if ((q != '"' && q != '\'') || (p > 0 && !span_separator(text[p - 1])) || span_separator(text[p + 1])) continue;
    for (size_t k = p + 2; k < text.size() && text[k] != '\n'; ++k) {
      if (text[k] == q && !span_separator(text[k - 1]) &&
          (k + 1 == text.size() || !std::isalnum(static_cast<unsigned char>(text[k + 1])))) {
        quotes.emplace_back(p + 1, k);
        p = k;
        break;
      }
    }
  }
  for (size_t at = text.find(value); at != std::string_view::npos; at = text.find(value, at + 1)) {
    if (!span_start(text, at)) continue;
    size_t end = at + value.size();
    const auto quote = std::find_if(quotes.begin(), quotes.end(), [&](const auto& r) { return r.first <= at && at < r.second; });
    if (quote != quotes.end()) {
      if (quote->first != at || quote->second < end) continue;  // inside a quote: the quote is the unit
      end = quote->second;
    } else {
      while (end < text.size() && !span_end(text, end)) ++end;  // the rest of the word
      if (ascii_upper(value[0])) end = capitalised_run(text, end);
    }
    if (end == at + value.size()) return {};  // a whole unit as it is: nothing to complete
    const std::string_view s = text.substr(at, end - at);
    if (s.size() <= max_bytes && clean_value(s) && std::find(out.begin(), out.end(), s) == out.end()) out.emplace_back(s);
  }
  return out;
}

}  // namespace dloop::engine::toolcall
