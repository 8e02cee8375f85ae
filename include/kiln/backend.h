// Choosing how a graph runs: the reference interpreter or the native CPU compiler.
// Every caller that needs an Executable goes through make_executable(), so the training
// runtime does not care which backend it got.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kiln/runtime.h"

namespace kiln {

struct BackendOptions {
  std::string backend = "interp";  // one of backend_names()
};

// The names accepted by BackendOptions::backend, the default first.
std::vector<std::string> backend_names();
std::string default_backend();

// Builds an executable for `g` on the chosen backend. An unknown backend name is a
// ConfigError listing the valid ones.
std::unique_ptr<Executable> make_executable(const Graph& g, const BackendOptions& options = {});

}  // namespace kiln
