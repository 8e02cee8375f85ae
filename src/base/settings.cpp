#include "kiln/base/settings.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "kiln/base/error.h"

namespace kiln {
namespace {

// clang-format off
const std::vector<Setting> kTable = {
  // The compile cache (src/cache).
  {"KILN_CACHE_DIR", "a directory (created, mode 700, if missing)", "no cache",
   "The compile cache's directory when graph_compiler_cache_dir / --graph-compiler-cache-dir is not given.",
   "cache", true},
  {"KILN_REMOTE_CACHE", "redis[s]://[USER@]HOST[:PORT][/DB]", "no remote tier",
   "The compile cache's remote tier when graph_compiler_remote_cache / --remote-cache is not given.", "cache", true},
  {"KILN_REMOTE_CACHE_KEY_FILE", "a file of 16 bytes to 64 KiB only you can read (mode 600 or 400)", "none",
   "The HMAC key the remote tier's entries are signed with, when --remote-cache-key-file is not given.", "cache",
   true},
  {"KILN_REMOTE_CACHE_PASSWORD_FILE", "a file only you can read; one line end at its end is dropped", "no AUTH",
   "The password the remote tier's server asks for (AUTH; with USER@ in the address, that ACL user's).", "cache",
   true},
  {"KILN_REMOTE_CACHE_PASSWORD", "a non-empty text (not with KILN_REMOTE_CACHE_PASSWORD_FILE)", "no AUTH",
   "The same password itself, as redis-cli's REDISCLI_AUTH.", "cache", true},
  {"KILN_REMOTE_CACHE_TLS_CERT_FILE", "a PEM certificate (with its chain); with KILN_REMOTE_CACHE_TLS_KEY_FILE",
   "no client certificate", "The client certificate for a rediss:// server with tls-auth-clients.", "cache", true},
  {"KILN_REMOTE_CACHE_TLS_KEY_FILE", "its PEM key, a file only you can read", "none",
   "The client certificate's key.", "cache", true},
  {"KILN_CACHE_FAILPOINT", "staging | before_rename", "none",
   "For tests: the process dies by SIGKILL at that point of storing a cache entry.", "cache", true},
  // Compiling and running steps (src/backend).
  {"KILN_CXX", "a C++17 compiler command", "c++",
   "The compiler of the generated steps.", "backend", true},
  {"KILN_CXX_TIMEOUT", "a positive number of seconds", "600",
   "The longest one compile may run; past it the compiler is killed and the graph runs on the interpreter.",
   "backend", true},
  {"KILN_DUMP_IR", "a directory", "none", "Writes each graph's IR there, after every pass.", "backend", true},
  {"KILN_DUMP_CODE", "a directory", "none", "Writes the generated C++ of each compiled step there.", "backend", true},
  {"KILN_PROFILE", "0, 1, or a number of rows above 1", "0",
   "Prints per-kernel times of the compiled step after training (N: the N slowest; 1: 25).", "backend", true},
  {"KILN_FLUSH_DENORMALS", "1 | 0", "1",
   "1 flushes subnormal floats to zero inside steps (as TensorFlow does); 0 keeps IEEE subnormals.", "backend",
   true},
  {"KILN_JOB_OBJECT_FAILPOINT", "corrupt", "none",
   "For tests: a rank that receives a compiled step over MPI damages one byte of it.", "backend", true},
  {"TMPDIR", "a writable directory", "/tmp", "Where steps are compiled (a private directory each, removed after).",
   "backend", false},
  // The process (src/process).
  {"KILN_KEEP_OPENMP_WAIT", "set (any value) or unset", "unset",
   "Set: kiln leaves OpenMP's wait policy as it is; kiln sets it when it re-executes itself with GOMP_SPINCOUNT.",
   "process", true},
  {"OMP_WAIT_POLICY", "libgomp's (ACTIVE | PASSIVE)", "unset",
   "Set: kiln leaves OpenMP's wait policy to it instead of choosing GOMP_SPINCOUNT.", "process", false},
  {"GOMP_SPINCOUNT", "libgomp's (a number of spins, or INFINITY)", "chosen by kiln for the machine",
   "How long OpenMP threads spin before sleeping; set, kiln keeps it.", "process", false},
  // Data parallelism (src/dist).
  {"OMPI_COMM_WORLD_SIZE", "set by Open MPI's mpirun", "unset",
   "Set (or PMIX_RANK, PMI_SIZE): the process was launched by an MPI launcher and trains data-parallel.", "dist",
   false},
  {"PMIX_RANK", "set by a PMIx launcher", "unset", "As OMPI_COMM_WORLD_SIZE.", "dist", false},
  {"PMI_SIZE", "set by a PMI launcher", "unset", "As OMPI_COMM_WORLD_SIZE.", "dist", false},
  {"OMPI_COMM_WORLD_LOCAL_SIZE", "a positive number, set by Open MPI", "MPI_LOCALNRANKS, else 1",
   "Ranks on this host: they share its cores for their threads.", "dist", false},
  {"MPI_LOCALNRANKS", "a positive number, set by MPICH's launcher", "1", "As OMPI_COMM_WORLD_LOCAL_SIZE.", "dist",
   false},
  // Training (src/train).
  {"KILN_CHECKPOINT_FAILPOINT", "written | fsynced | renamed | saved, optionally @STEP", "none",
   "For tests: the process dies by SIGKILL at that point of writing a checkpoint (of step STEP).", "train", true},
  // The Python package (python/kiln).
  {"KILN_RANDOM_SEED", "a whole number from 0 to 2^53 - 1", "0",
   "The seed of a run whose script sets none (to run an unchanged script with several seeds).", "python", true},
  {"KILN_MAX_STEPS", "a whole number >= 1", "no cap",
   "Every train() call trains at most this many steps past where it starts (to try a script quickly).", "python",
   true},
  // The Ascend adapter's sess.run mode (python/kiln/_src/session.py): the script tells the
  // precision switch of experimental_accelerate_train_mode where training is.
  {"STEP_NOW", "a whole number >= 0, set by the script before each sess.run", "unset (required by a step split)",
   "sess.run mode: the global step the next training run starts at, for experimental_accelerate_train_mode.",
   "python", false},
  {"TOTAL_STEP", "a whole number >= 1", "unset (required by a step split)",
   "sess.run mode: the steps the whole run trains; the low phase ends at floor(ratio * TOTAL_STEP).", "python",
   false},
  {"LOSS_NOW", "a number, set by the script after each sess.run", "unset (required by a loss split)",
   "sess.run mode: the last training run's loss, for a loss split of experimental_accelerate_train_mode.",
   "python", false},
  {"TARGET_LOSS", "a finite number > 0", "unset (required by a loss split)",
   "sess.run mode: the final loss; the low phase ends when the loss falls to ratio * TARGET_LOSS.", "python",
   false},
};
// clang-format on

std::string shown(const std::string& text) { return text.size() > 200 ? text.substr(0, 200) + "..." : text; }

}  // namespace

const std::vector<Setting>& settings_table() { return kTable; }

const Setting& setting(std::string_view name) {
  for (const Setting& s : kTable)
    if (name == s.name) return s;
  KILN_THROW(InternalError) << "[settings] '" << name << "' is read but is not in the settings table (kiln/base/settings.h)";
}

std::optional<std::string> setting_value(std::string_view name) {
  const char* v = std::getenv(setting(name).name);
  if (!v) return std::nullopt;
  return std::string(v);
}

std::string setting_text(std::string_view name) { return setting_value(name).value_or(""); }

std::string setting_or(std::string_view name, std::string given) {
  setting(name);  // a name outside the table is a bug even when a value is given
  return given.empty() ? setting_text(name) : given;
}

std::optional<int64_t> setting_integer(std::string_view name, int64_t min, int64_t max) {
  const std::optional<std::string> v = setting_value(name);
  if (!v || v->empty()) return std::nullopt;
  int64_t n = 0;
  const auto r = std::from_chars(v->data(), v->data() + v->size(), n);
  if (r.ec == std::errc() && r.ptr == v->data() + v->size() && n >= min && n <= max) return n;
  KILN_THROW(ConfigError) << "[" << name << "] '" << shown(*v) << "' is not valid: give an integer from " << min
                          << " to " << max << " (" << setting(name).valid << ")";
}

std::optional<double> setting_positive_number(std::string_view name) {
  const std::optional<std::string> v = setting_value(name);
  if (!v || v->empty()) return std::nullopt;
  double x = 0;
  const auto r = std::from_chars(v->data(), v->data() + v->size(), x);
  if (r.ec == std::errc() && r.ptr == v->data() + v->size() && x > 0 && std::isfinite(x)) return x;
  KILN_THROW(ConfigError) << "[" << name << "] '" << shown(*v) << "' is not valid: give " << setting(name).valid
                          << " (unset: " << setting(name).fallback << ")";
}

std::string settings_markdown() {
  std::string s =
      "# Settings\n\n"
      "<!-- Generated from the table in src/base/settings.cpp by `kiln settings --markdown`;\n"
      "     tests/base/settings_test.cpp fails when this page and the table differ. -->\n\n"
      "Every environment variable kiln reads. An option given in code (RunConfig, ExperimentalConfig) or\n"
      "on the command line wins over its variable; a variable wins over the default. Values are read\n"
      "when they are needed. An invalid value is an error that begins with the variable's name.\n"
      "`kiln settings` lists them with the values this environment gives.\n\n"
      "## kiln's own\n\n"
      "| variable | valid values | unset | what it does | read by |\n"
      "| --- | --- | --- | --- | --- |\n";
  const auto rows = [&](bool owned) {
    for (const Setting& x : kTable)
      if (x.owned == owned)
        s += std::string("| `") + x.name + "` | " + x.valid + " | " + x.fallback + " | " + x.doc + " | " + x.layer +
             " |\n";
  };
  rows(true);
  s += "\n## Other programs' variables kiln obeys\n\n"
       "| variable | valid values | unset | what it does | read by |\n"
       "| --- | --- | --- | --- | --- |\n";
  rows(false);
  s += "\nOpenSSL reads `SSL_CERT_FILE` and `SSL_CERT_DIR` itself: the CAs a `rediss://` server's\n"
       "certificate is checked against (docs/compile-cache.md).\n";
  return s;
}

}  // namespace kiln
