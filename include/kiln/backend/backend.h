// Choosing how a graph runs: the reference interpreter or the native CPU compiler.
// Every caller that needs an Executable goes through make_executable(), so the training
// runtime does not care which backend it got.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/backend/compiler.h"
#include "kiln/backend/runtime.h"

namespace kiln {

// Where a graph runs: native code from the CPU compiler, or the reference interpreter.
enum class Backend : uint8_t { cpu, interp };
// "cpu", "interp": the one table of the backends' names (options, records, reports).
std::string_view backend_name(Backend b);
// The inverse, for what a user wrote (--backend, Estimator(backend=)): a ConfigError
// "[backend] unknown backend 'gpu'; valid: cpu, interp" for anything else.
Backend parse_backend(std::string_view name);
// Every backend's name, the default (cpu) first.
std::vector<std::string> backend_names();
inline constexpr Backend kDefaultBackend = Backend::cpu;

struct BackendOptions {
  Backend backend = kDefaultBackend;
  // The policy applies on both backends (the interpreter runs the policy's casts too);
  // the rest of it (cache, dumps, profiling) only where something is compiled.
  CompileOptions compile{};
  CompileReport* report = nullptr;  // if set, the cpu backend fills it
};

// Builds an executable for `g` on the chosen backend. If native compilation fails (no compiler, or it
// reports an error), the cpu backend warns on stderr with the compiler's message (once per
// distinct message in a process), records it in options.report->fallback, and returns the
// interpreter.
std::unique_ptr<Executable> make_executable(const Graph& g, const BackendOptions& options = {});

}  // namespace kiln
