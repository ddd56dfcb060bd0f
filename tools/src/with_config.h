// Private: typed, strict reading of a tool's `with:` object from a workflow. Unknown keys are
// errors with a did-you-mean suggestion; every getter names the tool and the key on error
// ("sqlite_query: with.max_rows must be an integer in [1, 100000]"). Read-only; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/status.h"

namespace dloop::tools {

class WithConfig {
 public:
  // kWith: a built-in's `with:` mapping ("with.timeout must be ..."); kDeclaration: a whole tool
  // entry such as a command tool's ("timeout must be ...").
  enum class Section { kWith, kDeclaration };

  // `with` must be null (no options) or an object whose keys are all in `allowed`.
  static base::Result<WithConfig> open(std::string tool, const base::Json& with, std::vector<std::string> allowed,
                                       Section section = Section::kWith);

  bool has(std::string_view key) const { return with_.find(key) != nullptr; }
  base::Result<bool> get_bool(std::string_view key, bool fallback) const;
  base::Result<int64_t> get_int(std::string_view key, int64_t fallback, int64_t min, int64_t max) const;
  // A duration: "10s", "250ms", "2m", or a bare number of seconds. Must be > 0.
  base::Result<int64_t> get_duration_ms(std::string_view key, int64_t fallback) const;
  base::Result<std::optional<std::string>> get_string(std::string_view key) const;
  // An array of non-empty strings; empty when absent.
  base::Result<std::vector<std::string>> get_string_list(std::string_view key) const;
  // An object of string values (numbers and booleans are written as JSON text); empty when absent.
  base::Result<std::vector<std::pair<std::string, std::string>>> get_string_map(std::string_view key) const;

 private:
  base::Status error(std::string_view key, std::string_view what) const;

  std::string tool_;
  base::Json with_;
  Section section_ = Section::kWith;
};

}  // namespace dloop::tools
