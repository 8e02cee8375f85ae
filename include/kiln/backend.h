// Choosing how a graph runs: the reference interpreter or the native CPU compiler.
// Every caller that needs an Executable goes through make_executable(), so the training
// runtime does not care which backend it got.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/precision.h"
#include "kiln/runtime.h"

namespace kiln {

struct CompileReport;

struct BackendOptions {
  std::string backend = "cpu";  // one of backend_names()
  PrecisionPolicy policy = PrecisionPolicy::original;  // the compiler applies it (cpu only)
  CompileReport* report = nullptr;  // if set, the cpu backend fills it
  // The compile cache (cpu only), as in CompileOptions: off when cache_dir is empty.
  std::string cache_dir;
  int64_t cache_size_cap_bytes = int64_t{2} << 30;
  bool cache_strict = false;
};

// The names accepted by BackendOptions::backend, the default first.
std::vector<std::string> backend_names();
std::string default_backend();

// Builds an executable for `g` on the chosen backend. An unknown backend name is a
// ConfigError listing the valid ones. If native compilation fails (no compiler, or it
// reports an error), the cpu backend warns on stderr with the compiler's message and
// returns the interpreter.
std::unique_ptr<Executable> make_executable(const Graph& g, const BackendOptions& options = {});

}  // namespace kiln
