// Finds the GGUF file a `--model` / `model:` value names: "default" (or nothing) means the
// bundled model, looked up in $DLOOP_MODEL, next to the binary, in the source tree it was built
// from, and in the install prefix; anything else is a path. Thread-safe (reads only).
#pragma once

#include <optional>
#include <string>

#include "dloop/base/status.h"
#include "dloop/engine/device.h"

namespace dloop::cli {

base::Result<std::string> resolve_model_path(const std::string& spec);

// The device a `--device` value (or, without the flag, a workflow's `device:`) names. Errors:
// an unknown name ("--device: unknown device 'x' (cpu or cuda)"), or cuda in a build without
// the CUDA backend ("--device cuda: this build has no CUDA backend"). Whether a GPU is present
// is found out when the engine opens.
base::Result<engine::Device> resolve_device(const std::optional<std::string>& flag, const std::string& fallback);

}  // namespace dloop::cli
