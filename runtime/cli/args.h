// A small declarative command-line parser for the dloop verbs: flags with values ("--name VALUE"
// or "--name=VALUE"), boolean switches, repeatable flags and positional arguments. Errors are
// Status values with one-line messages ("unknown flag '--temprature' (did you mean
// '--temperature'?)"); the caller prints usage and exits 2. Not thread-safe (CLI start-up only).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dloop/base/status.h"

namespace dloop::cli {

struct FlagSpec {
  std::string name;        // without dashes: "temperature"
  std::string value_name;  // "" for a boolean switch, else e.g. "FLOAT"
  std::string help;
  bool repeated = false;   // may be given more than once
  std::string default_text;  // shown in --help
};

class ParsedArgs {
 public:
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::optional<std::string> get(const std::string& name) const;
  std::vector<std::string> all(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }

  // Typed getters: the default when absent; invalid_argument naming the flag when malformed.
  base::Result<double> get_double(const std::string& name, double fallback) const;
  base::Result<int64_t> get_int(const std::string& name, int64_t fallback, int64_t min, int64_t max) const;

 private:
  friend class ArgParser;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

class ArgParser {
 public:
  ArgParser(std::string command, std::string synopsis, std::string description)
      : command_(std::move(command)), synopsis_(std::move(synopsis)), description_(std::move(description)) {}

  ArgParser& flag(FlagSpec spec);
  // `--help`/`-h` is always accepted; parse() reports it through help_requested().
  base::Result<ParsedArgs> parse(const std::vector<std::string>& args, size_t min_positional,
                                 size_t max_positional);
  bool help_requested() const { return help_requested_; }
  std::string usage() const;  // the full --help text
  const std::string& command() const { return command_; }

 private:
  const FlagSpec* find(const std::string& name) const;

  std::string command_;
  std::string synopsis_;
  std::string description_;
  std::vector<FlagSpec> flags_;
  bool help_requested_ = false;
};

}  // namespace dloop::cli
