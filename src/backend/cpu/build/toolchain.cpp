#include "backend/cpu/build/toolchain.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "kiln/backend/cpu_features.h"
#include "kiln/base/error.h"

extern char** environ;

namespace kiln::cpu {
namespace {

constexpr double kDefaultTimeout = 600;  // a compile of a large graph on a busy machine fits
constexpr double kProbeTimeout = 30;     // `c++ --version` answers at once
constexpr size_t kOutputKept = 64 << 10;

struct Outcome {
  int status = -1;  // exit status; -1 for a signal or a time-out
  bool timed_out = false;
  std::string output;  // stdout and stderr together, the first kOutputKept bytes
};

[[noreturn]] void os_error(const std::string& what, int err) {
  KILN_THROW(SystemError) << "[compiler] " << what << ": " << std::strerror(err);
}

struct Running {
  pid_t pid = 0;
  int fd = -1;  // read end of its stdout+stderr; -1 once closed
  Outcome outcome;
};

// Starts argv (no shell) in a process group of its own, with stdin from /dev/null and
// stdout+stderr into a pipe. A spawn failure is an Outcome with status 127 and no pid.
Running spawn(const std::vector<std::string>& args) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) os_error("cannot create a pipe", errno);
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  Running r;
  const int rc = ::posix_spawnp(&r.pid, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    r.pid = 0;
    r.outcome.status = 127;
    r.outcome.output = "cannot execute '" + args[0] + "': " + std::strerror(rc);
    return r;
  }
  r.fd = fds[0];
  return r;
}

// Runs every command at once (each as spawn() starts it) and collects their output until
// all are done. Past `timeout` seconds every group still running (the driver and the
// cc1plus/as/ld it started) is killed with SIGKILL.
std::vector<Outcome> run_limited_all(const std::vector<std::vector<std::string>>& commands, double timeout) {
  std::vector<Running> runs;
  runs.reserve(commands.size());
  for (const auto& c : commands) runs.push_back(spawn(c));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  char buf[4096];
  for (;;) {
    std::vector<pollfd> polls;
    std::vector<Running*> owners;
    for (auto& r : runs)
      if (r.fd >= 0) {
        polls.push_back({r.fd, POLLIN, 0});
        owners.push_back(&r);
      }
    if (polls.empty()) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;  // the groups still open are killed below
    const int n = ::poll(polls.data(), polls.size(), static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (n <= 0) continue;  // EINTR or nothing yet
    for (size_t i = 0; i < polls.size(); ++i) {
      if (!polls[i].revents) continue;
      Running& r = *owners[i];
      const ssize_t got = ::read(r.fd, buf, sizeof buf);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {  // every writer closed: the group is done
        ::close(r.fd);
        r.fd = -1;
        continue;
      }
      std::string& out = r.outcome.output;
      if (out.size() < kOutputKept) out.append(buf, std::min(static_cast<size_t>(got), kOutputKept - out.size()));
    }
  }
  std::vector<Outcome> outcomes;
  for (auto& r : runs) {
    if (r.pid == 0) {
      outcomes.push_back(r.outcome);
      continue;
    }
    if (r.fd >= 0) {
      ::close(r.fd);
      r.outcome.timed_out = true;
      ::killpg(r.pid, SIGKILL);
    }
    int st = 0;
    while (::waitpid(r.pid, &st, 0) < 0 && errno == EINTR) {
    }
    Outcome& o = r.outcome;
    if (!o.timed_out) o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (!o.timed_out && WIFSIGNALED(st)) o.output += "\n(killed by signal " + std::to_string(WTERMSIG(st)) + ")";
    outcomes.push_back(std::move(o));
  }
  return outcomes;
}

Outcome run_limited(const std::vector<std::string>& args, double timeout) { return run_limited_all({args}, timeout)[0]; }

// The first lines of a tool's output, enough to say what went wrong.
std::string excerpt(const std::string& out, size_t max_lines, size_t max_chars) {
  std::string s;
  size_t lines = 0, at = 0;
  while (at < out.size() && lines < max_lines && s.size() < max_chars) {
    size_t nl = out.find('\n', at);
    if (nl == std::string::npos) nl = out.size();
    s += (lines ? "\n    " : "") + out.substr(at, nl - at);
    ++lines;
    at = nl + 1;
  }
  if (s.size() > max_chars) s = s.substr(0, max_chars);
  if (at < out.size()) s += "\n    [... output cut]";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.empty() ? "(no output)" : s;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// `cxx`'s identity and flags, or the error that it cannot compile (`probe` seconds at most).
std::pair<Toolchain, std::string> probe_compiler(const std::string& cxx, double probe) {
  Toolchain tc;
  tc.cxx = cxx;
  const Outcome o = run_limited({tc.cxx, "--version"}, probe);
  if (o.timed_out)
    return {tc, "[compiler] '" + tc.cxx + " --version' did not answer within " + seconds_text(probe) +
                    " s and was killed (set KILN_CXX to a working C++17 compiler; KILN_CXX_TIMEOUT sets the limit)"};
  if (o.status != 0)
    return {tc, "[compiler] '" + tc.cxx + " --version' failed (exit " + std::to_string(o.status) +
                    "), so it cannot compile: " + excerpt(o.output, 3, 400) +
                    " (set KILN_CXX to a C++17 compiler, or install g++)"};
  tc.identity = o.output.substr(0, o.output.find('\n'));
  // -ffp-contract=off: no fused multiply-adds the interpreter does not do, so compiled
  // steps match the oracle to the bit where the operation order is the same.
  // -fno-trapping-math: kiln never reads floating-point exception flags, and without it
  // GCC keeps a branch for every float comparison, so loops with a select (ReLU, the
  // clamps of the prelude's exp and erf) do not vectorize. Values are unchanged.
  tc.flags = {"-std=c++17",      "-O3",    "-march=native", "-fopenmp", "-fno-math-errno", "-fno-trapping-math",
              "-ffp-contract=off", "-fwrapv", "-fPIC",         "-w"};
  // GCC 12 tunes for 256-bit vectors even where AVX-512 is there (it guesses Rocket Lake for
  // newer Xeons and has no Zen 5 model). kiln's loops are long, branch-free and heavy in
  // exp/erf polynomials, so 512-bit lanes pay: GPT bf16 step 10% faster on an AVX512-FP16
  // Xeon, same losses to the last digit. Elementwise results do not depend on the width;
  // sums accumulate in double lanes, where a different lane count moves the float result
  // far less than one rounding. The flags are part of the compile cache's key.
  if (cpu_features().avx512f) tc.flags.push_back("-mprefer-vector-width=512");
  tc.link_flags = {"-shared", "-fopenmp"};
  return {tc, ""};
}

}  // namespace

Toolchain host_toolchain(const std::string& compiler, double timeout_seconds) {
  static_assert(kDefaultTimeout == 600, "the settings table (src/base/settings.cpp) says 600");
  if (timeout_seconds < 0 || !std::isfinite(timeout_seconds))
    KILN_THROW(ConfigError) << "[KILN_CXX_TIMEOUT] " << timeout_seconds
                            << " is not a time limit: give a positive number of seconds (0: 600)";
  const std::string cxx = compiler.empty() ? "c++" : compiler;
  const double timeout = timeout_seconds > 0 ? timeout_seconds : kDefaultTimeout;
  // Each compiler command is probed once per process; its outcome (or its error) is kept.
  static std::mutex mutex;
  static std::map<std::string, std::pair<Toolchain, std::string>> probed;
  const std::lock_guard<std::mutex> lock(mutex);
  auto found = probed.find(cxx);
  if (found == probed.end()) found = probed.emplace(cxx, probe_compiler(cxx, std::min(timeout, kProbeTimeout))).first;
  if (!found->second.second.empty()) throw SystemError(found->second.second);
  Toolchain tc = found->second.first;
  tc.timeout_seconds = timeout;
  return tc;
}

namespace {

// Throws the error for a run that timed out or failed; `what` names what it was doing.
void check(const Toolchain& tc, const Outcome& o, const std::string& what) {
  if (o.timed_out)
    KILN_THROW(SystemError) << "[compiler] '" << tc.cxx << "' did not finish " << what << " within "
                            << seconds_text(tc.timeout_seconds)
                            << " s; it and its children were killed (KILN_CXX_TIMEOUT sets the limit in seconds)";
  if (o.status != 0)
    KILN_THROW(SystemError) << "[compiler] '" << tc.cxx << "' failed (exit " << o.status << ") " << what << ":\n"
                            << o.output.substr(0, 4000);
}

std::vector<std::string> with(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> all = a;
  all.insert(all.end(), b.begin(), b.end());
  return all;
}

}  // namespace

void compile_shared_object(const Toolchain& tc, const std::string& source_path, const std::string& so_path) {
  compile_shared_object(tc, std::vector<std::string>{source_path}, so_path);
}

void compile_shared_object(const Toolchain& tc, const std::vector<std::string>& source_paths,
                           const std::string& so_path) {
  if (source_paths.empty()) KILN_THROW(InternalError) << "[compiler] no source to compile into " << so_path;
  if (source_paths.size() == 1) {  // one run: compile and link
    const auto args = with(with({tc.cxx}, tc.flags), with(tc.link_flags, {"-o", so_path, source_paths[0]}));
    check(tc, run_limited(args, tc.timeout_seconds), "compiling " + source_paths[0]);
    return;
  }
  // Every unit at once (the time limit covers them together), then one link.
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<std::string>> compiles;
  std::vector<std::string> objects;
  for (const auto& src : source_paths) {
    objects.push_back(src + ".o");
    compiles.push_back(with(with({tc.cxx}, tc.flags), {"-c", "-o", objects.back(), src}));
  }
  const std::vector<Outcome> outcomes = run_limited_all(compiles, tc.timeout_seconds);
  for (size_t i = 0; i < outcomes.size(); ++i) check(tc, outcomes[i], "compiling " + source_paths[i]);
  const double left = tc.timeout_seconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto link = with(with({tc.cxx}, tc.link_flags), with({"-o", so_path}, objects));
  check(tc, run_limited(link, std::max(left, 1.0)), "linking " + so_path);
}

}  // namespace kiln::cpu
