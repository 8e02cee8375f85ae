// The host C++ compiler: which one, its identity, its flags, and running it.
#pragma once
#include <string>
#include <vector>

namespace kiln::cpu {

struct Toolchain {
  std::string cxx;                 // CompileOptions::compiler, or "c++"
  std::string identity;            // first line of `cxx --version`
  std::vector<std::string> flags;       // compiling, for a shared object tuned to this CPU
  std::vector<std::string> link_flags;  // linking objects into the shared object
  double timeout_seconds = 600;    // the longest one build may run
};

// The toolchain of the compiler command `compiler` ("" = "c++") with the time limit
// `timeout_seconds` (0 = 600), from CompileOptions: each command is probed once per
// process. Throws SystemError if the compiler cannot be run or does not answer
// `--version` within min(timeout, 30 s), ConfigError for a negative limit. Every run of
// the compiler is in a process group of its own, killed whole on time-out.
Toolchain host_toolchain(const std::string& compiler = "", double timeout_seconds = 0);

// Compiles source_path into the shared object so_path; throws SystemError carrying the
// compiler's output on failure, or saying it ran out of time (the group is killed).
void compile_shared_object(const Toolchain& tc, const std::string& source_path, const std::string& so_path);
// The same for several translation units: all compiled at once (one compiler each, to
// <source>.o), then linked; one unit is compiled and linked in a single run. The time
// limit covers the whole build.
void compile_shared_object(const Toolchain& tc, const std::vector<std::string>& source_paths, const std::string& so_path);

}  // namespace kiln::cpu
