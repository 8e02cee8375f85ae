// Choosing how a graph runs: the reference interpreter or the native CPU compiler.
// Every caller that needs an Executable goes through make_executable(), so the training
// runtime does not care which backend it got.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/compiler.h"
#include "kiln/runtime.h"

namespace kiln {

struct BackendOptions {
  std::string backend = "cpu";  // one of backend_names()
  // The policy applies on both backends (the interpreter runs the policy's casts too);
  // the rest of it (cache, dumps, profiling) only where something is compiled.
  CompileOptions compile{};
  CompileReport* report = nullptr;  // if set, the cpu backend fills it
};

// The names accepted by BackendOptions::backend, the default first.
std::vector<std::string> backend_names();
std::string default_backend();

// Builds an executable for `g` on the chosen backend. An unknown backend name is a
// ConfigError listing the valid ones. If native compilation fails (no compiler, or it
// reports an error), the cpu backend warns on stderr with the compiler's message (once per
// distinct message in a process), records it in options.report->fallback, and returns the
// interpreter.
std::unique_ptr<Executable> make_executable(const Graph& g, const BackendOptions& options = {});

}  // namespace kiln
