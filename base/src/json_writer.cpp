// Json serialisation (compact, Python-style and pretty) and a syntax-error locator that gives
// the byte offset, line and column of the first problem for error messages.
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "dloop/base/json.h"
#include "dloop/base/strings.h"

namespace dloop::base {

void json_escape_to(std::string& out, std::string_view s) {
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80) {
      // Output is always valid UTF-8: an invalid sequence becomes U+FFFD.
      auto bad = find_invalid_utf8(s.substr(i, 4));
      size_t len = (c >= 0xF0) ? 4 : (c >= 0xE0) ? 3 : 2;
      if (bad.has_value() && *bad == 0) {
        out += "\ufffd";
      } else {
        out.append(s.substr(i, len));
        i += len - 1;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
}

std::string json_quote(std::string_view s) {
  std::string out;
  json_escape_to(out, s);
  return out;
}

std::string format_double(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  // Shortest round-trip digits in scientific form, then laid out as Python's repr does:
  // fixed notation for decimal exponents in [-4, 16), scientific otherwise.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  size_t e = sci.find('e');
  std::string mant = sci.substr(0, e);
  int exp10 = std::atoi(sci.c_str() + e + 1);
  std::string digits;
  for (char c : mant) if (c != '.') digits.push_back(c);
  std::string out = neg ? "-" : "";
  if (exp10 >= -4 && exp10 < 16) {
    if (exp10 < 0) {
      out += "0." + std::string(size_t(-exp10 - 1), '0') + digits;
    } else if (size_t(exp10) + 1 >= digits.size()) {
      out += digits + std::string(size_t(exp10) + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, size_t(exp10) + 1) + "." + digits.substr(size_t(exp10) + 1);
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char ebuf[16];
    std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    out += ebuf;
  }
  return out;
}

std::string Json::dump(Style style) const {
  std::string out;
  dump_to(out, style, 0);
  return out;
}

void Json::dump_to(std::string& out, Style style, int indent) const {
  const bool pretty = style == Style::kPretty;
  const char* item_sep = style == Style::kPython ? ", " : ",";
  const char* key_sep = style == Style::kCompact ? ":" : ": ";
  auto newline = [&](int level) {
    out.push_back('\n');
    out.append(size_t(level) * 2, ' ');
  };
  switch (type_) {
    case Type::kNull: out += "null"; break;
    case Type::kBool: out += bool_ ? "true" : "false"; break;
    case Type::kInt: out += std::to_string(int_); break;
    case Type::kDouble: out += format_double(double_); break;
    case Type::kString: json_escape_to(out, string_); break;
    case Type::kArray: {
      out.push_back('[');
      for (size_t i = 0; i < array_->size(); ++i) {
        if (i > 0) out += pretty ? "," : item_sep;
        if (pretty) newline(indent + 1);
        (*array_)[i].dump_to(out, style, indent + 1);
      }
      if (pretty && !array_->empty()) newline(indent);
      out.push_back(']');
      break;
    }
    case Type::kObject: {
      out.push_back('{');
      for (size_t i = 0; i < object_->size(); ++i) {
        if (i > 0) out += pretty ? "," : item_sep;
        if (pretty) newline(indent + 1);
        json_escape_to(out, (*object_)[i].first);
        out += key_sep;
        (*object_)[i].second.dump_to(out, style, indent + 1);
      }
      if (pretty && !object_->empty()) newline(indent);
      out.push_back('}');
      break;
    }
  }
}

namespace {

// A recursive-descent checker that only finds where and why text stops being JSON.
class ErrorLocator {
 public:
  ErrorLocator(std::string_view t, size_t max_depth) : t_(t), max_depth_(max_depth) {}

  JsonErrorPlace run() {
    skip_ws();
    if (value(0) && (skip_ws(), pos_ != t_.size())) fail("unexpected data after the JSON value");
    if (reason_.empty() && pos_ != t_.size()) fail("unexpected data after the JSON value");
    JsonErrorPlace place;
    if (reason_.empty()) return place;  // valid
    place.offset = pos_;
    place.reason = reason_;
    for (size_t i = 0; i < pos_ && i < t_.size(); ++i) {
      if (t_[i] == '\n') { ++place.line; place.column = 1; } else { ++place.column; }
    }
    return place;
  }

 private:
  bool fail(const char* why) { if (reason_.empty()) reason_ = why; return false; }
  bool at_end() const { return pos_ >= t_.size(); }
  void skip_ws() {
    while (!at_end() && (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n' || t_[pos_] == '\r')) ++pos_;
  }
  bool literal(const char* word) {
    size_t n = std::strlen(word);
    if (t_.substr(pos_, n) != word) return fail("invalid literal");
    pos_ += n;
    return true;
  }
  bool value(int depth) {
    if (size_t(depth) >= max_depth_) return fail("nesting too deep");
    if (at_end()) return fail("unexpected end of input");
    char c = t_[pos_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return string();
    if (c == 't') return literal("true");
    if (c == 'f') return literal("false");
    if (c == 'n') return literal("null");
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    return fail("unexpected character");
  }
  bool object(int depth) {
    ++pos_;
    skip_ws();
    if (!at_end() && t_[pos_] == '}') { ++pos_; return true; }
    while (true) {
      skip_ws();
      if (at_end() || t_[pos_] != '"') return fail(at_end() ? "unexpected end of input" : "expected a string key");
      if (!string()) return false;
      skip_ws();
      if (at_end() || t_[pos_] != ':') return fail("expected ':' after an object key");
      ++pos_;
      skip_ws();
      if (!value(depth + 1)) return false;
      skip_ws();
      if (at_end()) return fail("unexpected end of input");
      if (t_[pos_] == ',') { ++pos_; continue; }
      if (t_[pos_] == '}') { ++pos_; return true; }
      return fail("expected ',' or '}' in an object");
    }
  }
  bool array(int depth) {
    ++pos_;
    skip_ws();
    if (!at_end() && t_[pos_] == ']') { ++pos_; return true; }
    while (true) {
      skip_ws();
      if (!value(depth + 1)) return false;
      skip_ws();
      if (at_end()) return fail("unexpected end of input");
      if (t_[pos_] == ',') { ++pos_; continue; }
      if (t_[pos_] == ']') { ++pos_; return true; }
      return fail("expected ',' or ']' in an array");
    }
  }
  bool string() {
    ++pos_;
    while (!at_end()) {
      auto c = static_cast<unsigned char>(t_[pos_]);
      if (c == '"') { ++pos_; return true; }
      if (c < 0x20) return fail("control character in a string");
      if (c == '\\') {
        ++pos_;
        if (at_end()) break;
        char e = t_[pos_];
        if (e == 'u') {
          for (int i = 1; i <= 4; ++i) {
            if (pos_ + i >= t_.size() || !std::isxdigit(static_cast<unsigned char>(t_[pos_ + i]))) {
              return fail("bad \\u escape");
            }
          }
          pos_ += 5;
          continue;
        }
        if (std::strchr("\"\\/bfnrt", e) == nullptr || e == 0) return fail("bad escape in a string");
        ++pos_;
        continue;
      }
      if (c >= 0x80) {
        if (!utf8_char()) return fail("invalid UTF-8 in a string");
        continue;
      }
      ++pos_;
    }
    return fail("unterminated string");
  }
  bool utf8_char() {
    auto c = static_cast<unsigned char>(t_[pos_]);
    int n = (c >= 0xC2 && c < 0xE0) ? 1 : (c >= 0xE0 && c < 0xF0) ? 2 : (c >= 0xF0 && c <= 0xF4) ? 3 : -1;
    if (n < 0 || pos_ + size_t(n) >= t_.size()) return false;
    for (int i = 1; i <= n; ++i) {
      if ((static_cast<unsigned char>(t_[pos_ + i]) & 0xC0) != 0x80) return false;
    }
    pos_ += size_t(n) + 1;
    return true;
  }
  bool digits() {
    size_t start = pos_;
    while (!at_end() && t_[pos_] >= '0' && t_[pos_] <= '9') ++pos_;
    return pos_ > start;
  }
  bool number() {
    if (t_[pos_] == '-') ++pos_;
    if (at_end()) return fail("unexpected end of input in a number");
    if (t_[pos_] == '0') {
      ++pos_;
    } else if (!digits()) {
      return fail("expected a digit");
    }
    if (!at_end() && t_[pos_] == '.') {
      ++pos_;
      if (!digits()) return fail("expected a digit after '.'");
    }
    if (!at_end() && (t_[pos_] == 'e' || t_[pos_] == 'E')) {
      ++pos_;
      if (!at_end() && (t_[pos_] == '+' || t_[pos_] == '-')) ++pos_;
      if (!digits()) return fail("expected a digit in the exponent");
    }
    return true;
  }

  std::string_view t_;
  size_t pos_ = 0;
  std::string reason_;
  size_t max_depth_;
};

}  // namespace

JsonErrorPlace locate_json_error(std::string_view text, size_t max_depth) {
  return ErrorLocator(text, max_depth).run();
}

}  // namespace dloop::base
