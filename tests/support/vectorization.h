// Whether GCC vectorizes a loop of generated code, compiled with the flags kiln compiles
// generated code with (they decide it): the loop after the `#pragma omp simd` at `pragma`
// (a position in `src`). GCC names the loop by its `for` line or its first statement.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "backend/cpu/build/toolchain.h"
#include "support/temp_files.h"

namespace kiln::testkit {

inline ::testing::AssertionResult loop_vectorizes(const std::string& src, size_t pragma) {
  const auto dir = ::testkit::fresh_dir("vectorizes");
  std::filesystem::create_directories(dir);
  const auto file = dir / "step.cpp", info = dir / "vec.txt";
  std::ofstream(file) << src;
  const cpu::Toolchain& tc = cpu::host_toolchain();
  std::string cmd = tc.cxx;
  for (const std::string& f : tc.flags) cmd += " " + f;
  cmd += " -c -fopt-info-vec-optimized=" + info.string() + " -o " + (dir / "step.o").string() + " " + file.string();
  if (std::system(cmd.c_str()) != 0) return ::testing::AssertionFailure() << "does not compile: " << cmd << "\n" << src;
  const std::string report = ::testkit::read_file(info);
  std::filesystem::remove_all(dir);
  const int line = 1 + static_cast<int>(std::count(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(pragma), '\n'));
  std::istringstream lines(report);
  for (std::string l; std::getline(lines, l);)
    for (int at : {line + 1, line + 2})
      if (l.find("step.cpp:" + std::to_string(at) + ":") != std::string::npos &&
          l.find("loop vectorized") != std::string::npos)
        return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the loop after line " << line << " is not vectorized; the compiler said:\n"
                                       << report << src;
}

}  // namespace kiln::testkit
