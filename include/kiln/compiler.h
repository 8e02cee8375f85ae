// The native CPU compiler: a graph becomes C++ (fused kernels + a step function), which
// the host C++ compiler turns into a shared object that kiln loads. oneDNN does matmul;
// ops without a native kernel yet run the interpreter's kernel from the compiled step.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "kiln/precision.h"
#include "kiln/runtime.h"

namespace kiln {

struct CompileOptions {
  PrecisionPolicy policy = PrecisionPolicy::original;
  std::string dump_code_dir{};  // keep the generated source here (also KILN_DUMP_CODE)
  std::string dump_ir_dir{};    // write the IR after each pass here (also KILN_DUMP_IR)
  // The persistent compile cache (kiln/compile_cache.h): off when empty (then KILN_CACHE_DIR
  // is used if set). A cache that cannot work warns and is skipped, unless cache_strict.
  std::string cache_dir{};
  int64_t cache_size_cap_bytes = int64_t{2} << 30;
  bool cache_strict = false;
  // How long to wait for another process compiling the same graph before compiling
  // privately (without storing).
  double cache_lock_timeout_seconds = 600;
};

// Where compile time goes, per graph: the number the compile cache is judged against.
struct CompileReport {
  double passes_seconds = 0;
  double codegen_seconds = 0;
  double compile_seconds = 0;  // the host C++ compiler
  double load_seconds = 0;
  int kernels = 0;           // fused loops generated
  int library_calls = 0;     // oneDNN calls
  int fallback_ops = 0;      // ops run by the interpreter's kernels
  int64_t arena_bytes = 0;       // peak intermediate memory with planning
  int64_t unplanned_bytes = 0;   // the same without buffer reuse
  std::string compiler;          // the compiler command used
  std::string cache = "off";     // "hit", "miss", "off", or "error" (compiled, but storing failed)
  std::string cache_key;         // 32 hex digits when the cache was used
  std::string cache_note;        // why an entry was not loaded or stored, if so
  double total_seconds() const { return passes_seconds + codegen_seconds + compile_seconds + load_seconds; }
};

// Compiles `g` for this CPU. Throws SystemError with the compiler's own message when no
// compiler exists or it fails (make_executable turns that into a warning and a fallback
// to the interpreter).
std::unique_ptr<Executable> compile_cpu(const Graph& g, const CompileOptions& options = {},
                                        CompileReport* report = nullptr);

}  // namespace kiln
