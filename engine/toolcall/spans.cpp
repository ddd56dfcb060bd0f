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

}  // namespace dloop::engine::toolcall
