// `dloop validate FILE...`: loads each workflow file and prints every problem as
// "file:line:column: error: message", then a summary line per file ("flow.yaml: ok" or
// "flow.yaml: 3 errors"). --json prints one JSON object instead. Exit 0 when every file is valid,
// 2 when any is not (or on bad usage). Checks only: nothing is run, no model is loaded; `use:`
// names are checked against the built-in tools of this build.
#include <cstdio>
#include <string>

#include "args.h"
#include "commands.h"
#include "dloop/base/json.h"
#include "dloop/tools/builtins.h"
#include "dloop/workflows/load.h"

namespace dloop::cli {
namespace {

ArgParser validate_parser() {
  ArgParser p("validate", "[--json] FILE...",
              "Check workflow files without running them: YAML syntax, unknown keys, types, step and tool\n"
              "references, expressions, durations and JSON Schemas. Every problem is reported with\n"
              "file:line:column in one pass. Exit status: 0 all files valid, 2 a file has errors.");
  p.flag({"json", "", "print {\"valid\": ..., \"files\": [{\"file\", \"valid\", \"diagnostics\": [...]}]}"});
  return p;
}

std::string count_text(size_t n) { return std::to_string(n) + (n == 1 ? " error" : " errors"); }

}  // namespace

int cmd_validate(const std::vector<std::string>& args) {
  ArgParser parser = validate_parser();
  auto parsed = parser.parse(args, 1, SIZE_MAX);
  if (parser.help_requested()) {
    std::fputs(parser.usage().c_str(), stdout);
    return kExitOk;
  }
  if (!parsed.ok()) {
    std::fprintf(stderr, "dloop validate: %s\n(see 'dloop validate --help')\n", parsed.status().message().c_str());
    return kExitUsage;
  }
  const bool json = parsed->has("json");
  workflows::LoadOptions options;
  options.builtin_tools = tools::builtin_names();  // `use:` must name a built-in of this build
  bool all_valid = true;
  base::Json files = base::Json::array();
  for (const auto& path : parsed->positional()) {
    std::vector<workflows::Diagnostic> diags = workflows::validate_file(path, options);
    all_valid = all_valid && diags.empty();
    if (json) {
      base::Json list = base::Json::array();
      for (const auto& d : diags) list.push_back(d.to_json());
      base::Json f = base::Json::object();
      f.set("file", path);
      f.set("valid", diags.empty());
      f.set("diagnostics", std::move(list));
      files.push_back(std::move(f));
      continue;
    }
    for (const auto& d : diags) std::printf("%s\n", d.to_string().c_str());
    std::printf("%s: %s\n", path.c_str(), diags.empty() ? "ok" : count_text(diags.size()).c_str());
  }
  if (json) {
    base::Json out = base::Json::object();
    out.set("valid", all_valid);
    out.set("files", std::move(files));
    std::printf("%s\n", out.dump(base::Json::Style::kPretty).c_str());
  }
  return all_valid ? kExitOk : kExitUsage;
}

}  // namespace dloop::cli
