// The `dloop` binary: hands argv to the verb dispatcher.
#include <string>
#include <vector>

#include "commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return dloop::cli::dispatch(std::move(args));
}
