#include "kiln/backend.h"

#include <cstdio>

#include "kiln/compiler.h"
#include "kiln/error.h"
#include "passes/passes.h"

namespace kiln {

std::vector<std::string> backend_names() { return {"cpu", "interp"}; }
std::string default_backend() { return backend_names().front(); }

std::unique_ptr<Executable> make_executable(const Graph& g, const BackendOptions& options) {
  if (options.backend == "interp") {
    // The interpreter runs the policy's casts too: it is the oracle for every policy.
    if (options.policy == PrecisionPolicy::original) return make_interpreter(g);
    passes::LowerOptions lo;
    lo.policy = options.policy;
    return make_interpreter(passes::lower(g, lo));
  }
  if (options.backend == "cpu") {
    try {
      CompileOptions co;
      co.policy = options.policy;
      co.cache_dir = options.cache_dir;
      co.cache_size_cap_bytes = options.cache_size_cap_bytes;
      co.cache_strict = options.cache_strict;
      return compile_cpu(g, co, options.report);
    } catch (const SystemError& e) {
      // No compiler, or it failed: still train, on the interpreter, and say why.
      std::fprintf(stderr, "kiln: warning: native compilation failed, using the interpreter: %s\n", e.what());
      BackendOptions interp = options;
      interp.backend = "interp";
      return make_executable(g, interp);
    }
  }
  std::string valid;
  for (const auto& n : backend_names()) valid += (valid.empty() ? "" : ", ") + n;
  KILN_THROW(ConfigError) << "[backend] unknown backend '" << options.backend << "'; valid: " << valid;
}

}  // namespace kiln
