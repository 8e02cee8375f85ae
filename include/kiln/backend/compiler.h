// The native CPU compiler: a graph becomes C++ (fused kernels + a step function), which
// the host C++ compiler turns into a shared object that kiln loads. oneDNN does matmul and
// convolution; ops without a native kernel run the interpreter's kernel from the step.
// The pipeline, one named call per stage, is compile_cpu() in src/backend/cpu/compile.cpp.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "kiln/cache/cache_settings.h"
#include "kiln/passes/precision_policy.h"
#include "kiln/backend/runtime.h"

namespace kiln {

// PyTorch DDP's bucket_cap_mb default: the MLP's 7.5 MB of gradients in one bucket.
inline constexpr int64_t kDefaultAllReduceBucketBytes = int64_t{25} << 20;

struct CompileOptions {
  PrecisionPolicy policy = PrecisionPolicy::original;
  // The persistent compile cache (kiln/cache/compile_cache.h): off when cache.dir is empty.
  CacheSettings cache{};
  // Non-empty: write the IR after each pass to <dump_ir_dir>/<name>-<key>/ and the
  // generated source to <dump_code_dir>/<name>-<key>.cpp, on a cache hit as on a miss.
  // <key> is the cache key, or the graph's fingerprint when no cache is in use, so each
  // graph gets its own dump and none overwrites another's.
  std::string dump_ir_dir{};
  std::string dump_code_dir{};
  // What the dumps are called: "train", "eval", ... (letters, digits, '-', '_', '.').
  std::string name = "graph";
  // The host C++ compiler command that builds the step (empty: "c++"), and the longest
  // one build may run, in seconds (0: 600); past it the compiler's process group is killed
  // and the graph runs on the interpreter.
  std::string compiler{};
  double compiler_timeout_seconds = 0;
  // Time every kernel and library call; a table goes to stderr when the executable goes,
  // with the `profile_rows` slowest steps and as many groups of (kind, op).
  bool profile = false;
  int profile_rows = 25;
  // Translation units the generated code is cut into and compiled side by side (one
  // compiler each, then one link); 0: one per core this process may use. The code and the
  // cache key are the same whatever the number.
  int compile_jobs = 0;
  // Data-parallel jobs: the gradients' all_reduce nodes are summed in buckets of at most
  // this many bytes, one MPI call each (passes::bucket_all_reduces); 0 = one call per
  // gradient. RunConfig::all_reduce_bucket_bytes sets it for training.
  int64_t all_reduce_bucket_bytes = kDefaultAllReduceBucketBytes;
  // Data-parallel jobs: every rank builds this graph at the same point (the Estimator's
  // training and evaluation graphs), so rank 0 alone loads or compiles it and sends the
  // object to the others, who check and load it (backend/cpu/build/job_share.h): one
  // compile per job, with or without a shared cache. Graphs one rank may build alone (a
  // hook's extra fetches, input pipelines' maps) leave it off. No effect in a world of one.
  bool share_in_job = false;
};

// `options` with what it leaves unset taken from the environment: cache from KILN_CACHE_DIR
// and the remote tier's variables, dump_ir_dir from KILN_DUMP_IR, dump_code_dir from
// KILN_DUMP_CODE, compiler from KILN_CXX, compiler_timeout_seconds from KILN_CXX_TIMEOUT,
// profile from KILN_PROFILE (set and not "0"). Called once at the edge (the Estimator,
// the `kiln` command, the Python front end, the benchmarks); compile_cpu() itself reads
// no environment.
CompileOptions with_environment_defaults(CompileOptions options);

// Where compile time goes, per graph: the number the compile cache is judged against.
struct CompileReport {
  double passes_seconds = 0;
  double codegen_seconds = 0;
  double compile_seconds = 0;  // the host C++ compiler
  double load_seconds = 0;     // on a hit: the lookup, the checksum and dlopen
  int kernels = 0;           // fused loops generated
  int library_calls = 0;     // oneDNN calls
  int fallback_ops = 0;      // ops run by the interpreter's kernels
  int compile_units = 0;     // translation units compiled (0 on a cache hit)
  int64_t arena_bytes = 0;       // peak intermediate memory with planning
  int64_t unplanned_bytes = 0;   // the same without buffer reuse
  std::string compiler;          // the compiler command used
  CacheOutcome cache = CacheOutcome::off;
  std::string cache_key;         // 32 hex digits when the cache was used
  std::string cache_note;        // why an entry was not loaded or stored, if so
  std::string fallback;          // set by make_executable when the graph runs on the interpreter instead: why
  bool received = false;         // share_in_job: the object came from rank 0, not this rank's compiler or cache
  bool remote_hit = false;       // a cache hit served by the remote tier (CacheSettings::remote_url)
  double total_seconds() const { return passes_seconds + codegen_seconds + compile_seconds + load_seconds; }
};

// Compiles `g` for this CPU. Throws SystemError with the compiler's own message when no
// compiler exists or it fails (make_executable turns that into a warning and a fallback
// to the interpreter).
std::unique_ptr<Executable> compile_cpu(const Graph& g, const CompileOptions& options = {},
                                        CompileReport* report = nullptr);

}  // namespace kiln
