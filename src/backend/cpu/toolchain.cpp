#include "backend/cpu/toolchain.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "kiln/error.h"

namespace kiln::cpu {
namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a command, returning its exit status and combined output.
int run(const std::string& cmd, std::string& output) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) KILN_THROW(SystemError) << "[compiler] cannot run '" << cmd << "'";
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) output.append(buf.data(), n);
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace

const Toolchain& host_toolchain() {
  static std::once_flag once;
  static Toolchain tc;
  static std::string error;
  std::call_once(once, [] {
    const char* env = std::getenv("KILN_CXX");
    tc.cxx = env && *env ? env : "c++";
    std::string out;
    const int st = run(shell_quote(tc.cxx) + " --version", out);
    if (st != 0) {
      error = "[compiler] '" + tc.cxx + "' cannot be run (exit " + std::to_string(st) + "): " + out +
              " (set KILN_CXX to a C++17 compiler, or install g++)";
      return;
    }
    tc.identity = out.substr(0, out.find('\n'));
    // -ffp-contract=off: no fused multiply-adds the interpreter does not do, so compiled
    // steps match the oracle to the bit where the operation order is the same.
    tc.flags = {"-std=c++17", "-O3", "-march=native", "-fopenmp", "-fno-math-errno", "-ffp-contract=off", "-fwrapv", "-fPIC", "-shared", "-w"};
  });
  if (!error.empty()) throw SystemError(error);
  return tc;
}

void compile_shared_object(const Toolchain& tc, const std::string& source_path, const std::string& so_path) {
  std::string cmd = shell_quote(tc.cxx);
  for (const auto& f : tc.flags) cmd += " " + f;
  cmd += " -o " + shell_quote(so_path) + " " + shell_quote(source_path);
  std::string out;
  const int st = run(cmd, out);
  if (st != 0)
    KILN_THROW(SystemError) << "[compiler] '" << tc.cxx << "' failed (exit " << st << ") on " << source_path << ":\n"
                            << out.substr(0, 4000);
}

}  // namespace kiln::cpu
