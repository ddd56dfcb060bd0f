// Finds the GGUF file a `--model` / `model:` value names: "default" (or nothing) means the
// bundled model, looked up in $DLOOP_MODEL, next to the binary, in the source tree it was built
// from, and in the install prefix; anything else is a path. Thread-safe (reads only).
#pragma once

#include <string>

#include "dloop/base/status.h"

namespace dloop::cli {

base::Result<std::string> resolve_model_path(const std::string& spec);

}  // namespace dloop::cli
