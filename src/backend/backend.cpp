#include "kiln/backend.h"

#include <cstdio>

#include "kiln/compiler.h"
#include "kiln/error.h"

namespace kiln {

std::vector<std::string> backend_names() { return {"cpu", "interp"}; }
std::string default_backend() { return backend_names().front(); }

std::unique_ptr<Executable> make_executable(const Graph& g, const BackendOptions& options) {
  if (options.backend == "interp") return make_interpreter(g);
  if (options.backend == "cpu") {
    try {
      return compile_cpu(g, CompileOptions{options.policy, {}, {}}, options.report);
    } catch (const SystemError& e) {
      // No compiler, or it failed: still train, on the interpreter, and say why.
      std::fprintf(stderr, "kiln: warning: native compilation failed, using the interpreter: %s\n", e.what());
      return make_interpreter(g);
    }
  }
  std::string valid;
  for (const auto& n : backend_names()) valid += (valid.empty() ? "" : ", ") + n;
  KILN_THROW(ConfigError) << "[backend] unknown backend '" << options.backend << "'; valid: " << valid;
}

}  // namespace kiln
