#include "kiln/backend/backend.h"

#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "backend/interpreter_graph.h"
#include "backend/onednn/isa.h"
#include "kiln/base/error.h"
#include "kiln/ir/text.h"
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

Graph interpreter_graph(const Graph& g, const CompileOptions& options) {
  bool collective = false;
  for (const Node& n : g.nodes()) collective = collective || n.op == Op::all_reduce;
  const passes::LowerOptions lower{.policy = options.policy,
                                   .all_reduce_bucket_bytes = options.all_reduce_bucket_bytes,
                                   .float16_in_float32 = !onednn::uses_f16_kernels()};
  // The compiler's own input (compile_cpu): the canonical text, parsed.
  if (collective) return passes::lower(parse_graph(print_graph(g, TextForm::canonical)), lower);
  if (options.policy == PrecisionPolicy::original) return passes::bucket_all_reduces(g, options.all_reduce_bucket_bytes);
  return passes::lower(g, lower);
}

constexpr std::pair<Backend, std::string_view> kBackendNames[] = {{Backend::cpu, "cpu"}, {Backend::interp, "interp"}};

std::string_view backend_name(Backend b) {
  for (const auto& [backend, name] : kBackendNames)
    if (backend == b) return name;
  KILN_THROW(Error) << "[backend] no name for backend " << static_cast<int>(b);
}

Backend parse_backend(std::string_view name) {
  for (const auto& [backend, known] : kBackendNames)
    if (known == name) return backend;
  std::string valid;
  for (const auto& [backend, known] : kBackendNames) valid += (valid.empty() ? "" : ", ") + std::string(known);
  KILN_THROW(ConfigError) << "[backend] unknown backend '" << name << "'; valid: " << valid;
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto& [backend, name] : kBackendNames) names.emplace_back(name);
  return names;
}

std::unique_ptr<Executable> make_executable(const Graph& g, const BackendOptions& options) {
  if (options.backend == Backend::interp) {
    // The interpreter runs the policy's casts too: it is the oracle for every policy. It
    // reduces in the same buckets as the compiled step (interpreter_graph.h).
    return make_interpreter(interpreter_graph(g, options.compile));
  }
  try {
    return compile_cpu(g, options.compile, options.report);
  } catch (const SystemError& e) {
    // No compiler, or it failed: still train, on the interpreter, and say why (once per
    // reason: a missing compiler fails every graph of a run the same way).
    if (options.report) options.report->fallback = e.what();
    if (first_time(e.what()))
      std::fprintf(stderr, "kiln: warning: native compilation failed, using the interpreter: %s\n", e.what());
    BackendOptions interp = options;
    interp.backend = Backend::interp;
    return make_executable(g, interp);
  }
}

}  // namespace kiln
