// compile_cpu(): the CPU compiler as one script, stage by stage. Everything it needs is in
// CompileOptions (resolved at the edge: it reads no environment).
#include <chrono>

#include "backend/cpu/build/cache_entry.h"
#include "backend/cpu/codegen/codegen.h"
#include "backend/cpu/build/dumps.h"
#include "backend/cpu/run/executable.h"
#include "backend/cpu/build/host_build.h"
#include "backend/cpu/build/job_share.h"
#include "backend/cpu/build/object_identity.h"
#include "backend/cpu/schedule/schedule.h"
#include "backend/memory_check.h"
#include "backend/onednn/isa.h"
#include "cache/session.h"
#include "kiln/backend/compiler.h"
#include "kiln/backend/cpu_features.h"
#include "kiln/base/error.h"
#include "kiln/ir/text.h"
#include "kiln/dist/world.h"
#include "passes/passes.h"

namespace kiln {
namespace {

class Stopwatch {
 public:
  // Seconds since construction or the previous lap.
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// The canonical form is compiled, not g itself: graphs that differ only in creation
// order, dead nodes or intermediate names get the same schedule and the same code, which
// is what lets the compile cache key on the canonical text.
std::string canonicalise(const Graph& g) { return print_graph(g, TextForm::canonical); }

void describe_schedule(const cpu::Schedule& s, CompileReport& report) {
  report.kernels = s.kernel_count();
  for (const auto& st : s.steps) {
    report.library_calls += st.kind == cpu::StepKind::library;
    report.fallback_ops += st.kind == cpu::StepKind::fallback;
  }
  report.arena_bytes = s.arena_bytes;
  report.unplanned_bytes = s.unplanned_bytes;
}

std::string profile_title(const Graph& g, const CompileOptions& options) {
  if (!options.profile) return "";
  return std::to_string(g.size()) + " nodes, " + std::string(precision_policy_name(options.policy));
}

}  // namespace

std::unique_ptr<Executable> compile_cpu(const Graph& g, const CompileOptions& options, CompileReport* out) {
  if (options.compile_jobs < 0)
    KILN_THROW(ConfigError) << "[compile_jobs] " << options.compile_jobs
                            << " is not a number of compiler runs: give 1 or more, or 0 for one per core";
  CompileReport local;
  CompileReport& report = out ? *out : local;
  Stopwatch clock;
  cpu::CompileDumps dumps(options);

  const std::string canonical = canonicalise(g);
  const Graph lowered = passes::lower(parse_graph(canonical), {.policy = options.policy,
                                                               .after_pass = dumps.pass_recorder(),
                                                               .all_reduce_bucket_bytes = options.all_reduce_bucket_bytes,
                                                               .float16_in_float32 = !onednn::uses_f16_kernels()});
  cpu::Schedule schedule = cpu::make_schedule(lowered);
  // Before the host compiler runs: a step the machine cannot hold is refused, not compiled.
  check_fits_in_memory(schedule.arena_bytes, "the step's working memory (graph '" + options.name + "')");
  report.passes_seconds = clock.lap();
  describe_schedule(schedule, report);

  // Generated every time (about a millisecond): the source is part of the key, so a kiln
  // whose code generator changed never loads another kiln's object.
  const cpu::GeneratedSource generated = cpu::generate_source(schedule);
  const std::string source = generated.text();
  report.codegen_seconds = clock.lap();

  const cpu::Toolchain tc = cpu::host_toolchain(options.compiler, options.compiler_timeout_seconds);
  report.compiler = tc.cxx + " (" + tc.identity + ")";
  // Hyperparameter values are not in the key: the source does not hold them (the
  // executable fills their buffers from this graph), so one object serves every value.
  const cache::KeyIngredients key =
      cpu::cache_key_ingredients(print_graph(g, TextForm::structure), options.policy, source, tc);
  // The object carries what it was built for; every load checks it.
  const cpu::ObjectIdentity built_for = cpu::identity_of(key.key(), key.get("graph"), schedule);
  const std::string identity = built_for.to_string();
  const std::string identity_code = cpu::identity_source(built_for);
  dumps.write(key.key(), source + identity_code);

  std::optional<cache::Session> cache;
  if (options.cache.enabled()) cache.emplace(options.cache, key);
  const auto meta = [&] { return cpu::entry_metadata(report, g, options.policy, source.size()); };
  // This process's object: from its cache, else compiled (and published); `bytes` gets the
  // object file's bytes when asked for (for the other ranks of a job).
  const auto obtain = [&](std::string* bytes) {
    std::unique_ptr<cpu::SharedObject> object = cache ? cpu::load_cached(*cache, identity, report, bytes) : nullptr;
    if (object) return object;
    cpu::HostBuildTimes times;
    // The key covers the step as one text; how it is cut into units changes no code.
    const auto units = generated.units(options.compile_jobs > 0 ? options.compile_jobs : cpu_features().cores, identity_code);
    report.compile_units = static_cast<int>(units.size());
    return cpu::build_shared_object(units, identity, tc, times, [&](const std::string& so_path) {
      report.compile_seconds = times.compile_seconds;
      report.load_seconds = times.load_seconds;
      if (bytes) *bytes = cpu::read_object_file(so_path);
      if (cache) cache->publish(so_path, meta());
    });
  };
  std::unique_ptr<cpu::SharedObject> object =
      options.share_in_job && World::get().distributed()
          ? cpu::object_for_job(key.key(), identity, cache ? &*cache : nullptr, report,
                                [&](std::string& bytes) { return obtain(&bytes); }, meta)
          : obtain(nullptr);
  if (cache) {
    report.cache = cache->outcome();
    report.cache_key = cache->key();
    report.cache_note = cache->note();
    report.remote_hit = cache->remote_hit();
  }
  return cpu::make_compiled_executable(std::move(schedule), std::move(object), profile_title(g, options),
                                       options.profile_rows);
}

}  // namespace kiln
