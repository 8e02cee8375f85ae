// Small file helpers for tests: a fresh per-process temp directory, and reading a file.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace testkit {

// An empty path under the temp directory, unique to this process and `name`.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const auto d = std::filesystem::temp_directory_path() / ("kiln-test-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(d);
  return d;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace testkit
