// WithConfig. See with_config.h.
#include "with_config.h"

#include <algorithm>

#include "dloop/base/strings.h"

namespace dloop::tools {

base::Result<WithConfig> WithConfig::open(std::string tool, const base::Json& with, std::vector<std::string> allowed,
                                          Section section) {
  WithConfig out;
  out.tool_ = std::move(tool);
  out.section_ = section;
  const bool decl = section == Section::kDeclaration;
  if (with.is_null()) {
    out.with_ = base::Json::object();
    return out;
  }
  if (!with.is_object()) {
    return base::invalid_argument(out.tool_ + (decl ? ": the tool entry must be a mapping" : ": `with:` must be a mapping of options"));
  }
  for (const auto& [key, value] : with.as_object()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string msg = out.tool_ + (decl ? ": unknown key '" : ": unknown `with:` key '") + key + "'";
    if (auto guess = base::closest_match(key, allowed)) msg += " (did you mean '" + *guess + "'?)";
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    return base::invalid_argument(msg + (allowed.empty() ? "; it takes no options" : "; allowed: " + list));
  }
  out.with_ = with;
  return out;
}

base::Status WithConfig::error(std::string_view key, std::string_view what) const {
  return base::invalid_argument(tool_ + (section_ == Section::kWith ? ": with." : ": ") + std::string(key) +
                                " must be " + std::string(what));
}

base::Result<bool> WithConfig::get_bool(std::string_view key, bool fallback) const {
  const base::Json* v = with_.find(key);
  if (v == nullptr) return fallback;
  if (!v->is_bool()) return error(key, "true or false");
  return v->as_bool();
}

base::Result<int64_t> WithConfig::get_int(std::string_view key, int64_t fallback, int64_t min, int64_t max) const {
  const base::Json* v = with_.find(key);
  if (v == nullptr) return fallback;
  if (!v->is_int() || v->as_int() < min || v->as_int() > max) {
    return error(key, "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return v->as_int();
}

base::Result<int64_t> WithConfig::get_duration_ms(std::string_view key, int64_t fallback) const {
  const base::Json* v = with_.find(key);
  if (v == nullptr) return fallback;
  std::optional<int64_t> ms;
  if (v->is_number() && v->as_double() > 0 && v->as_double() < 1e9) {
    ms = static_cast<int64_t>(v->as_double() * 1000.0);
  } else if (v->is_string()) {
    ms = base::parse_duration_ms(v->as_string());
  }
  if (!ms || *ms <= 0) return error(key, "a positive duration such as \"10s\", \"500ms\" or \"2m\"");
  return *ms;
}

base::Result<std::optional<std::string>> WithConfig::get_string(std::string_view key) const {
  const base::Json* v = with_.find(key);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string() || v->as_string().empty()) return error(key, "a non-empty string");
  return std::optional<std::string>(v->as_string());
}

base::Result<std::vector<std::string>> WithConfig::get_string_list(std::string_view key) const {
  std::vector<std::string> out;
  const base::Json* v = with_.find(key);
  if (v == nullptr) return out;
  if (!v->is_array()) return error(key, "a list of strings");
  for (const auto& item : v->as_array()) {
    if (!item.is_string() || item.as_string().empty()) return error(key, "a list of non-empty strings");
    out.push_back(item.as_string());
  }
  return out;
}

base::Result<std::vector<std::pair<std::string, std::string>>> WithConfig::get_string_map(std::string_view key) const {
  std::vector<std::pair<std::string, std::string>> out;
  const base::Json* v = with_.find(key);
  if (v == nullptr) return out;
  if (!v->is_object()) return error(key, "a mapping of names to strings");
  for (const auto& [name, value] : v->as_object()) {
    if (value.is_string()) out.emplace_back(name, value.as_string());
    else if (value.is_number() || value.is_bool()) out.emplace_back(name, value.dump());
    else return error(key, "a mapping of names to strings ('" + name + "' is not a string)");
  }
  return out;
}

}  // namespace dloop::tools
