// The generated code's own float exp and erf (kiln/float_math.h, embedded in the prelude):
// within 1 and 3 ulps of glibc's expf and erff over every 97th float (subnormal results,
// overflow, infinities, NaN and signed zeros included), the same bits in vector loops built
// with the toolchain's flags as the interpreter gets from the same header built with the
// library's, and vectorized, which is why they exist (libm's are scalar calls that kept
// GELU and softmax loops scalar).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "backend/cpu/codegen/codegen.h"
#include "backend/cpu/build/toolchain.h"
#include "kiln/float_math.h"
#include "support/temp_files.h"

namespace kiln::cpu {
namespace {

const char* const kProgram = R"(
#include <cstdio>
#include <cstring>
namespace {
float from_bits(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
double ulps(float got, float want) {
  if (want != want) return got != got ? 0.0 : 1e30;
  if (got != got) return 1e30;
  if (__builtin_isinf(want) || __builtin_isinf(got)) return got == want ? 0.0 : 1e30;
  if (got == want) return 0.0;
  const float aw = __builtin_fabsf(want);
  const float spacing = __builtin_nextafterf(aw, INFINITY) - aw;
  return __builtin_fabs(static_cast<double>(got) - static_cast<double>(want)) / spacing;
}
const int kBatch = 4096;
__attribute__((noinline)) void exp_loop(const float* x, float* y) {
#pragma omp simd
  for (int i = 0; i < kBatch; ++i) y[i] = km::exp(x[i]);  // KILN-EXP-LOOP
}
__attribute__((noinline)) void erf_loop(const float* x, float* y) {
#pragma omp simd
  for (int i = 0; i < kBatch; ++i) y[i] = km::erf(x[i]);  // KILN-ERF-LOOP
}
}  // namespace
int main() {
  static float x[kBatch], e[kBatch], f[kBatch];
  double worst_exp = 0, worst_erf = 0;
  float at_exp = 0, at_erf = 0;
  unsigned long long u = 0, hash_exp = 1469598103934665603ull, hash_erf = hash_exp;
  while (u < (1ull << 32)) {
    for (int i = 0; i < kBatch; ++i, u += 97) x[i] = from_bits(static_cast<unsigned>(u));
    exp_loop(x, e);
    erf_loop(x, f);
    for (int i = 0; i < kBatch; ++i) {
      const double de = ulps(e[i], __builtin_expf(x[i])), df = ulps(f[i], __builtin_erff(x[i]));
      if (de > worst_exp) { worst_exp = de; at_exp = x[i]; }
      if (df > worst_erf) { worst_erf = df; at_erf = x[i]; }
      unsigned be, bf;
      std::memcpy(&be, &e[i], 4);
      std::memcpy(&bf, &f[i], 4);
      hash_exp = (hash_exp ^ be) * 1099511628211ull;
      hash_erf = (hash_erf ^ bf) * 1099511628211ull;
    }
  }
  std::printf("exp %.3f %.9g\nerf %.3f %.9g\nbits %llx %llx\n", worst_exp, at_exp, worst_erf, at_erf, hash_exp, hash_erf);
  // Values whose results are exact: zeros, infinities, NaN, overflow, underflow to zero,
  // exp of a tiny x (1) and erf's saturated tails (1).
  const float exact_exp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 88.7229f, 1000.0f, -104.5f, -1000.0f, 1e-30f, -1e-10f};
  const float exact_erf[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 3.95f, -3.95f, 10.0f, -1000.0f};
  for (int which = 0; which < 2; ++which) {
    const float* v = which == 0 ? exact_exp : exact_erf;
    const int n = which == 0 ? 11 : 9;
    for (int i = 0; i < n; ++i) {
      x[0] = v[i];
      if (which == 0) exp_loop(x, e); else erf_loop(x, e);
      const float want = which == 0 ? __builtin_expf(v[i]) : __builtin_erff(v[i]);
      unsigned a, b;
      std::memcpy(&a, &e[0], 4);
      std::memcpy(&b, &want, 4);
      std::printf("special %s(%.9g) %x libm %x\n", which == 0 ? "exp" : "erf", v[i], a, b);
    }
  }
}
)";

struct Built {
  std::string output;    // what the program printed
  std::string vec_info;  // the compiler's -fopt-info-vec-optimized report
  std::string source;
};

Built build_and_run() {
  const auto dir = testkit::fresh_dir("prelude-math");
  std::filesystem::create_directories(dir);
  const auto src = dir / "math.cpp", exe = dir / "math", info = dir / "vec.txt", out = dir / "out.txt";
  Built b;
  b.source = std::string(kPrelude) + kProgram;
  std::ofstream(src) << b.source;
  // The flags generated code is compiled with, which decide vectorization (-fPIC and
  // -w included; a program links fine with them).
  const Toolchain& tc = host_toolchain();
  std::string cmd = tc.cxx;
  for (const std::string& f : tc.flags) cmd += " " + f;
  cmd += " -fopt-info-vec-optimized=" + info.string() + " -o " + exe.string() + " " + src.string() + " > " +
         out.string() + " 2>&1 && " + exe.string() + " > " + out.string() + " 2>&1";
  const int st = std::system(cmd.c_str());
  b.output = testkit::read_file(out);
  b.vec_info = testkit::read_file(info);
  EXPECT_EQ(st, 0) << cmd << "\n" << b.output;
  std::filesystem::remove_all(dir);
  return b;
}

const Built& built() {
  static const Built b = build_and_run();
  return b;
}

int line_of(const std::string& text, const std::string& marker) {
  const size_t at = text.find(marker);
  EXPECT_NE(at, std::string::npos) << marker;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

TEST(PreludeMath, ExpAndErfStayWithinAFewUlpsOfLibm) {
  const Built& b = built();
  std::istringstream in(b.output);
  std::string name, at;
  double worst_exp = -1, worst_erf = -1;
  in >> name >> worst_exp >> at;
  EXPECT_EQ(name, "exp") << b.output;
  EXPECT_LE(worst_exp, 1.0) << "exp is " << worst_exp << " ulps from libm at " << at;
  in >> name >> worst_erf >> at;
  EXPECT_EQ(name, "erf") << b.output;
  EXPECT_LE(worst_erf, 3.0) << "erf is " << worst_erf << " ulps from libm at " << at;
  EXPECT_GE(worst_exp, 0.0);
  EXPECT_GE(worst_erf, 0.0);
}

TEST(PreludeMath, TheInterpreterComputesTheSameBits) {
  // The same sweep and hash as the program's, over the interpreter's functions.
  unsigned long long hash_exp = 1469598103934665603ull, hash_erf = hash_exp;
  // The program runs whole batches of 4096 while a batch starts below 2^32 (wrapping at the end).
  const uint64_t batch = 4096 * 97, values = ((uint64_t{1} << 32) + batch - 1) / batch * 4096;
  for (uint64_t k = 0; k < values; ++k) {
    float x;
    const auto bits = static_cast<uint32_t>(k * 97);
    std::memcpy(&x, &bits, 4);
    const float e = kiln_math::exp_f32(x), f = kiln_math::erf_f32(x);
    uint32_t be, bf;
    std::memcpy(&be, &e, 4);
    std::memcpy(&bf, &f, 4);
    hash_exp = (hash_exp ^ be) * 1099511628211ull;
    hash_erf = (hash_erf ^ bf) * 1099511628211ull;
  }
  char want[64];
  std::snprintf(want, sizeof want, "bits %llx %llx\n", hash_exp, hash_erf);
  EXPECT_NE(built().output.find(want), std::string::npos) << "interpreter: " << want << "prelude:\n" << built().output;
}

TEST(PreludeMath, SpecialValuesComeOutAsLibmGivesThem) {
  // Bit-exact where the result is exact (the sweep above bounds every other value).
  std::istringstream in(built().output);
  std::string line;
  int seen = 0;
  while (std::getline(in, line)) {
    if (line.rfind("special", 0) != 0) continue;
    ++seen;
    std::istringstream f(line);
    std::string tag, call, got, libm, want;
    f >> tag >> call >> got >> libm >> want;
    if (call.find("nan") != std::string::npos) {
      // Any NaN will do: the exponent all ones and the mantissa not zero.
      const unsigned bits = static_cast<unsigned>(std::stoul(got, nullptr, 16));
      EXPECT_EQ(bits & 0x7f800000u, 0x7f800000u) << line;
      EXPECT_NE(bits & 0x007fffffu, 0u) << line;
      continue;
    }
    EXPECT_EQ(got, want) << line;
  }
  EXPECT_EQ(seen, 20) << built().output;
}

TEST(PreludeMath, LoopsUsingThemVectorize) {
  const Built& b = built();
  for (const char* marker : {"KILN-EXP-LOOP", "KILN-ERF-LOOP"}) {
    const std::string where = "math.cpp:" + std::to_string(line_of(b.source, marker)) + ":";
    bool vectorized = false;
    std::istringstream in(b.vec_info);
    for (std::string line; std::getline(in, line);)
      vectorized |= line.find(where) != std::string::npos && line.find("loop vectorized") != std::string::npos;
    EXPECT_TRUE(vectorized) << marker << " (" << where << ") is not vectorized; the compiler said:\n" << b.vec_info;
  }
}

}  // namespace
}  // namespace kiln::cpu
