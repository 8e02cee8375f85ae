// The 2x2 max-pooling row functions of the generated code's prelude (prelude_pool.cpp):
// the AVX-512 path and the portable loops (KILN_PORTABLE) must give the same bits, on
// rows of every length from 1 to 40 outputs (full vectors and tails) whose windows hold
// every arrangement of ties, signed zeros, infinities and NaN, with and without the
// folded ReLU mask (positive). The compiled-vs-interpreter tests hold the AVX-512
// path to the interpreter; this test carries that to machines without AVX-512.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "backend/cpu/codegen/codegen.h"
#include "support/temp_files.h"

namespace kiln::cpu {
namespace {

const char* const kProgram = R"(
#include <cstdio>
#include <cstring>
#include <vector>
// Rows of n outputs whose windows run through every arrangement of four taps from
// {0, -0, 1, -1, inf, NaN} (6^4 windows, so every tie and every NaN position), rows of
// 1 to 40 outputs (full vectors and tails) and one row of all 1296 windows.
template <class T>
void run(const char* name, T (*make)(float)) {
  const float values[6] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, NAN};
  int combo = 0;
  for (int n = 1; n <= 41; ++n) {
    const int width = n == 41 ? 1296 : n;
    std::vector<T> r0(2 * width), r1(2 * width), dy(width), y(width), o0(2 * width), o1(2 * width), p0(2 * width),
        p1(2 * width);
    for (int j = 0; j < width; ++j, combo = (combo + 1) % 1296) {
      r0[2 * j] = make(values[combo % 6]);
      r0[2 * j + 1] = make(values[combo / 6 % 6]);
      r1[2 * j] = make(values[combo / 36 % 6]);
      r1[2 * j + 1] = make(values[combo / 216]);
      dy[j] = make(0.25f * float(j % 64 + 1));
    }
    maxpool2x2_row(r0.data(), r1.data(), y.data(), width);
    maxpool2x2_grad_row(r0.data(), r1.data(), dy.data(), o0.data(), o1.data(), width, false);
    maxpool2x2_grad_row(r0.data(), r1.data(), dy.data(), p0.data(), p1.data(), width, true);
    std::printf("%s %d:", name, width);
    for (const auto* v : {&y, &o0, &o1, &p0, &p1})
      for (T t : *v) {
        unsigned bits = 0;
        std::memcpy(&bits, &t, sizeof t);
        std::printf(" %x", bits);
      }
    std::printf("\n");
  }
}
int main() {
  std::printf("avx512 %d\n", KILN_POOL_AVX512);
  run<float>("f32", [](float x) { return x; });
  run<uint16_t>("bf16", [](float x) { return f2bf(x); });
}
)";

// Compiles the prelude and kProgram with `flags`, runs it, returns its output.
std::string build_and_run(const std::filesystem::path& dir, const std::string& name, const std::string& flags) {
  const auto src = dir / (name + ".cpp"), exe = dir / name, out = dir / (name + ".txt");
  std::ofstream(src) << kPrelude << kPreludePool << kProgram;
  const std::string cmd = "c++ -std=c++17 -O2 -march=native " + flags + " -o " + exe.string() + " " + src.string() +
                          " > " + out.string() + " 2>&1 && " + exe.string() + " > " + out.string() + " 2>&1";
  const int st = std::system(cmd.c_str());
  const std::string text = testkit::read_file(out);
  EXPECT_EQ(st, 0) << cmd << "\n" << text;
  return text;
}

TEST(PreludePool, VectorAndPortableRowsGiveTheSameBits) {
  const auto dir = testkit::fresh_dir("prelude-pool");
  std::filesystem::create_directories(dir);
  const std::string native = build_and_run(dir, "native", "");
  const std::string portable = build_and_run(dir, "portable", "-DKILN_PORTABLE");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(portable.rfind("avx512 0\n", 0), 0u) << portable.substr(0, 200);
  if (native.rfind("avx512 1\n", 0) != 0) GTEST_SKIP() << "this CPU has no AVX-512: only the portable rows exist";
  EXPECT_EQ(native.substr(9), portable.substr(9));
  EXPECT_NE(native.find("bf16 1296:"), std::string::npos);
}

}  // namespace
}  // namespace kiln::cpu
