// The host-compile stage: generated source in, loaded shared object out, built in a
// private temporary directory that is gone when this returns.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/cpu/run/loader.h"
#include "backend/cpu/build/toolchain.h"

namespace kiln::cpu {

struct HostBuildTimes {
  double compile_seconds = 0;  // the host C++ compiler
  double load_seconds = 0;     // dlopen and the ABI check
};

// Writes the translation units (GeneratedSource::units) to a fresh directory under the
// temporary directory (TMPDIR), compiles them side by side with `tc` and links them,
// loads the object (checking it says `identity`) and calls `publish` with the object's
// path (to store it in the cache) before the directory is removed; the loaded mapping
// outlives the file. SystemError when the compiler or the loader fails; ConfigError when
// the temporary directory is unusable (TMPDIR missing or not a directory).
std::unique_ptr<SharedObject> build_shared_object(const std::vector<std::string>& units, const std::string& identity,
                                                  const Toolchain& tc, HostBuildTimes& times,
                                                  const std::function<void(const std::string&)>& publish);

}  // namespace kiln::cpu
