// Command-line parsing for the dloop verbs; see args.h.
#include "args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "dloop/base/strings.h"

namespace dloop::cli {

std::optional<std::string> ParsedArgs::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> ParsedArgs::all(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

base::Result<double> ParsedArgs::get_double(const std::string& name, double fallback) const {
  auto v = get(name);
  if (!v) return fallback;
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(v->c_str(), &end);
  if (v->empty() || end != v->c_str() + v->size() || errno != 0 || !std::isfinite(d)) {
    return base::invalid_argument("--" + name + ": expected a number, got '" + *v + "'");
  }
  return d;
}

base::Result<int64_t> ParsedArgs::get_int(const std::string& name, int64_t fallback, int64_t min,
                                          int64_t max) const {
  auto v = get(name);
  if (!v) return fallback;
  char* end = nullptr;
  errno = 0;
  long long d = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || end != v->c_str() + v->size() || errno != 0) {
    return base::invalid_argument("--" + name + ": expected an integer, got '" + *v + "'");
  }
  if (d < min || d > max) {
    return base::invalid_argument("--" + name + ": " + *v + " is out of range [" + std::to_string(min) + ", " +
                                  std::to_string(max) + "]");
  }
  return static_cast<int64_t>(d);
}

ArgParser& ArgParser::flag(FlagSpec spec) {
  flags_.push_back(std::move(spec));
  return *this;
}

const FlagSpec* ArgParser::find(const std::string& name) const {
  for (const auto& f : flags_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

base::Result<ParsedArgs> ArgParser::parse(const std::vector<std::string>& args, size_t min_positional,
                                          size_t max_positional) {
  ParsedArgs out;
  bool only_positional = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (only_positional || a.size() < 2 || a[0] != '-' || a == "-") {
      out.positional_.push_back(a);
      continue;
    }
    if (a == "--") { only_positional = true; continue; }
    if (a == "--help" || a == "-h") { help_requested_ = true; return out; }
    if (a[1] != '-') return base::invalid_argument("unknown flag '" + a + "' (flags are spelled --name)");
    std::string name = a.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const FlagSpec* spec = find(name);
    if (spec == nullptr) {
      std::vector<std::string> names;
      for (const auto& f : flags_) names.push_back(f.name);
      std::string msg = "unknown flag '--" + name + "'";
      if (auto close = base::closest_match(name, names)) msg += " (did you mean '--" + *close + "'?)";
      return base::invalid_argument(msg);
    }
    if (spec->value_name.empty()) {
      if (inline_value) return base::invalid_argument("flag '--" + name + "' takes no value");
      out.values_[name].push_back("true");
      continue;
    }
    std::string value;
    if (inline_value) {
      value = *inline_value;
    } else {
      if (i + 1 >= args.size()) return base::invalid_argument("missing value for '--" + name + "' (" + spec->value_name + ")");
      value = args[++i];
    }
    auto& slot = out.values_[name];
    if (!slot.empty() && !spec->repeated) {
      return base::invalid_argument("flag '--" + name + "' given more than once");
    }
    slot.push_back(std::move(value));
  }
  if (out.positional_.size() < min_positional) {
    return base::invalid_argument("missing argument: " + synopsis_);
  }
  if (out.positional_.size() > max_positional) {
    return base::invalid_argument("unexpected argument '" + out.positional_[max_positional] + "'");
  }
  return out;
}

std::string ArgParser::usage() const {
  std::string out = "usage: dloop " + command_ + " " + synopsis_ + "\n\n" + description_ + "\n";
  if (!flags_.empty()) out += "\noptions:\n";
  for (const auto& f : flags_) {
    std::string left = "  --" + f.name + (f.value_name.empty() ? "" : " " + f.value_name);
    if (left.size() < 28) left.append(28 - left.size(), ' '); else left += "\n" + std::string(28, ' ');
    out += left + f.help;
    if (!f.default_text.empty()) out += " (default: " + f.default_text + ")";
    out += "\n";
  }
  out += "  --help                    show this help\n";
  return out;
}

}  // namespace dloop::cli
