// Top-level dispatch: global flags (--help, --version, --log-level), verb lookup with
// did-you-mean, and the messages for verbs that are not built yet.
#include "commands.h"

#include <cstdio>
#include <iostream>

#include "dloop/base/log.h"
#include "dloop/base/strings.h"

namespace dloop::cli {
namespace {

[[maybe_unused]] int not_implemented(const char* verb) {
  std::fprintf(stderr, "dloop %s: not implemented yet in this version (see 'dloop --help')\n", verb);
  return kExitUsage;
}

#define DLOOP_PLANNED(verb, summary) \
  Command { verb, summary, [](const std::vector<std::string>&) { return not_implemented(verb); } }

}  // namespace

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"run", "run a workflow file and print its outputs as JSON", &cmd_run},
      {"resume", "finish an interrupted run from its event log", &cmd_resume},
      {"generate", "generate text with a diffusion model", &cmd_generate},
      {"validate", "check workflow files and report every error with file:line:column", &cmd_validate},
      {"bench", "measure engine performance against baselines measured in the same run", &cmd_bench},
      {"index", "add documents to the retrieval index or search it", &cmd_index},
      {"mcp", "serve workflows as MCP tools over stdio", &cmd_mcp},
      {"runs", "list runs, show one run, or diff two runs", &cmd_runs},
      {"replay", "re-execute a recorded run and report the first divergence", &cmd_replay},
      {"trace", "export a run's trace (JSONL, OpenTelemetry) or import one", &cmd_trace},
      {"serve", "serve the OpenAI-compatible HTTP API and the workflow-runs API", &cmd_serve},
      {"eval", "measure a model's tool-calling accuracy on held-out turns", &cmd_eval},
  };
  return table;
}

const std::vector<Command>& planned_commands() {
  static const std::vector<Command> table = {
  };
  return table;
}

std::string top_level_usage() {
  std::string out =
      "usage: dloop [--log-level LEVEL] COMMAND [ARGS...]\n\n"
      "dloop runs agent workflows on an in-process diffusion language model.\n\n";
  if (!commands().empty()) {
    out += "commands:\n";
    for (const auto& c : commands()) {
      std::string name = std::string("  ") + c.name;
      name.append(name.size() < 14 ? 14 - name.size() : 1, ' ');
      out += name + c.summary + "\n";
    }
    out += "\n";
  }
  if (!planned_commands().empty()) {
    out += "not implemented yet in this version:\n";
    for (const auto& c : planned_commands()) {
      std::string name = std::string("  ") + c.name;
      name.append(name.size() < 14 ? 14 - name.size() : 1, ' ');
      out += name + c.summary + "\n";
    }
    out += "\n";
  }
  out +=
      "global options:\n"
      "  --log-level LEVEL   trace, debug, info, warn (default), error or off; also DLOOP_LOG\n"
      "  --version           print the version and exit\n"
      "  --help              show this help; 'dloop COMMAND --help' for a command\n\n"
      "exit status: 0 success, 1 the operation failed, 2 bad usage or bad input\n";
  return out;
}

int dispatch(std::vector<std::string> args) {
  // --log-level is accepted anywhere on the line and removed before the verb sees its args.
  for (size_t i = 0; i < args.size();) {
    std::string value;
    size_t take = 0;
    if (args[i] == "--log-level") {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "dloop: missing value for '--log-level' (LEVEL)\n%s", top_level_usage().c_str());
        return kExitUsage;
      }
      value = args[i + 1];
      take = 2;
    } else if (base::starts_with(args[i], "--log-level=")) {
      value = args[i].substr(12);
      take = 1;
    }
    if (take == 0) { ++i; continue; }
    auto level = base::parse_log_level(value);
    if (!level) {
      std::fprintf(stderr, "dloop: bad --log-level '%s' (trace, debug, info, warn, error, off)\n", value.c_str());
      return kExitUsage;
    }
    base::set_log_level(*level);
    args.erase(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i + take));
  }
  if (args.empty()) {
    std::fputs(top_level_usage().c_str(), stderr);
    return kExitUsage;
  }
  const std::string verb = args[0];
  if (verb == "--help" || verb == "-h" || verb == "help") {
    std::fputs(top_level_usage().c_str(), stdout);
    return kExitOk;
  }
  if (verb == "--version" || verb == "version") {
    std::printf("dloop %s\n", DLOOP_VERSION);
    return kExitOk;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  for (const auto* table : {&commands(), &planned_commands()}) {
    for (const auto& c : *table) {
      if (verb == c.name) return c.run(rest);
    }
  }
  std::vector<std::string> names;
  for (const auto* table : {&commands(), &planned_commands()}) {
    for (const auto& c : *table) names.emplace_back(c.name);
  }
  std::string msg = verb[0] == '-' ? "unknown flag '" + verb + "'" : "unknown command '" + verb + "'";
  if (auto close = base::closest_match(verb, names)) msg += " (did you mean '" + *close + "'?)";
  std::fprintf(stderr, "dloop: %s\n%s", msg.c_str(), top_level_usage().c_str());
  return kExitUsage;
}

}  // namespace dloop::cli
