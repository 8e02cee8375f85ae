#include "backend/cpu/build/host_build.h"
#include "kiln/base/settings.h"

#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "kiln/base/error.h"

namespace kiln::cpu {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

fs::path temp_root() {
  std::error_code ec;
  const fs::path root = fs::temp_directory_path(ec);
  if (ec) {
    KILN_THROW(ConfigError) << "[TMPDIR] '" << setting_value("TMPDIR").value_or("/tmp") << "' is not a usable temporary directory ("
                            << ec.message() << "); set TMPDIR to a writable directory";
  }
  return root;
}

// Removes the build directory however the build ends.
struct BuildDir {
  fs::path path;
  ~BuildDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

std::unique_ptr<SharedObject> build_shared_object(const std::vector<std::string>& units, const std::string& identity,
                                                  const Toolchain& tc, HostBuildTimes& times,
                                                  const std::function<void(const std::string&)>& publish) {
  const fs::path root = temp_root();
  std::string tmpl = (root / "kiln-build-XXXXXX").string();
  if (!mkdtemp(tmpl.data()))
    KILN_THROW(ConfigError) << "[TMPDIR] cannot create a build directory in " << root << ": " << std::strerror(errno)
                            << "; set TMPDIR to a writable directory";
  const BuildDir dir{tmpl};
  std::vector<std::string> sources;
  for (size_t i = 0; i < units.size(); ++i) {
    const fs::path src = dir.path / (i == 0 ? std::string("step.cpp") : "step" + std::to_string(i) + ".cpp");
    std::ofstream out(src);
    out << units[i];
    out.close();
    if (!out) KILN_THROW(SystemError) << "[compiler] cannot write " << src;
    sources.push_back(src.string());
  }
  const fs::path so = dir.path / "step.so";
  auto t = Clock::now();
  compile_shared_object(tc, sources, so.string());
  times.compile_seconds = since(t);
  t = Clock::now();
  auto object = std::make_unique<SharedObject>(so.string(), identity);
  times.load_seconds = since(t);
  if (publish) publish(so.string());
  return object;
}

}  // namespace kiln::cpu
