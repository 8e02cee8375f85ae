#include "kiln/backend.h"

#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "kiln/error.h"
#include "passes/passes.h"

namespace kiln {
namespace {
bool first_time(const std::string& message) {
  static std::mutex m;
  static std::set<std::string> said;
  const std::lock_guard<std::mutex> lock(m);
  return said.insert(message).second;
}
}  // namespace

std::vector<std::string> backend_names() { return {"cpu", "interp"}; }
std::string default_backend() { return backend_names().front(); }

std::unique_ptr<Executable> make_executable(const Graph& g, const BackendOptions& options) {
  if (options.backend == "interp") {
    // The interpreter runs the policy's casts too: it is the oracle for every policy. It
    // reduces in the same buckets as the compiled step (one MPI call per bucket).
    if (options.compile.policy == PrecisionPolicy::original)
      return make_interpreter(passes::bucket_all_reduces(g, options.compile.all_reduce_bucket_bytes));
    return make_interpreter(passes::lower(
        g, {.policy = options.compile.policy, .all_reduce_bucket_bytes = options.compile.all_reduce_bucket_bytes}));
  }
  if (options.backend == "cpu") {
    try {
      return compile_cpu(g, options.compile, options.report);
    } catch (const SystemError& e) {
      // No compiler, or it failed: still train, on the interpreter, and say why (once per
      // reason: a missing compiler fails every graph of a run the same way).
      if (options.report) options.report->fallback = e.what();
      if (first_time(e.what()))
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
