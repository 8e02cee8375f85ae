#include "kiln/backend.h"

#include "kiln/error.h"

namespace kiln {

std::vector<std::string> backend_names() { return {"interp"}; }
std::string default_backend() { return backend_names().front(); }

std::unique_ptr<Executable> make_executable(const Graph& g, const BackendOptions& options) {
  if (options.backend == "interp") return make_interpreter(g);
  std::string valid;
  for (const auto& n : backend_names()) valid += (valid.empty() ? "" : ", ") + n;
  KILN_THROW(ConfigError) << "[backend] unknown backend '" << options.backend << "'; valid: " << valid;
}

}  // namespace kiln
