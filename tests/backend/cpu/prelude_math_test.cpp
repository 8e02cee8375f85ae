// The generated code's own float exp, erf and tanh (kiln/ir/float_math.h, embedded in the
// prelude): within 1, 3 and 2 ulps of glibc's expf, erff and tanhf over every 97th float
// (subnormal results, overflow, infinities, NaN and signed zeros included), the same bits
// in vector loops built
// with the toolchain's flags as the interpreter gets from the same header built with the
// library's, and vectorized, which is why they exist (libm's are scalar calls that kept
// GELU, softmax and RNN loops scalar).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "backend/cpu/codegen/codegen.h"
#include "backend/cpu/build/toolchain.h"
#include "kiln/ir/float_math.h"
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
__attribute__((noinline)) void tanh_loop(const float* x, float* y) {
#pragma omp simd
  for (int i = 0; i < kBatch; ++i) y[i] = km::tanh(x[i]);  // KILN-TANH-LOOP
}
__attribute__((noinline)) void gelu_loop(const float* x, float* y) {
#pragma omp simd
  for (int i = 0; i < kBatch; ++i) y[i] = kiln_math::gelu_f32(x[i]);  // KILN-GELU-LOOP
}
__attribute__((noinline)) void gelu_grad_loop(const float* x, float* y) {
#pragma omp simd
  for (int i = 0; i < kBatch; ++i) y[i] = y[i] * kiln_math::gelu_grad_factor_f32(x[i]);  // KILN-GELU-GRAD-LOOP
}
struct Fn {
  const char* name;
  void (*loop)(const float*, float*);
  float (*libm)(float);
  double worst;
  float at;
  unsigned long long hash;
};
}  // namespace
int main() {
  Fn fns[] = {{"exp", exp_loop, [](float v) { return __builtin_expf(v); }, 0, 0, 1469598103934665603ull},
              {"erf", erf_loop, [](float v) { return __builtin_erff(v); }, 0, 0, 1469598103934665603ull},
              {"tanh", tanh_loop, [](float v) { return __builtin_tanhf(v); }, 0, 0, 1469598103934665603ull}};
  static float x[kBatch], y[kBatch];
  for (Fn& fn : fns) {
    for (unsigned long long u = 0; u < (1ull << 32);) {
      for (int i = 0; i < kBatch; ++i, u += 97) x[i] = from_bits(static_cast<unsigned>(u));
      fn.loop(x, y);
      for (int i = 0; i < kBatch; ++i) {
        const double d = ulps(y[i], fn.libm(x[i]));
        if (d > fn.worst) { fn.worst = d; fn.at = x[i]; }
        unsigned b;
        std::memcpy(&b, &y[i], 4);
        fn.hash = (fn.hash ^ b) * 1099511628211ull;
      }
    }
    std::printf("%s %.3f %.9g\n", fn.name, fn.worst, fn.at);
  }
  std::printf("bits %llx %llx %llx\n", fns[0].hash, fns[1].hash, fns[2].hash);
  gelu_loop(x, y);  // built for their vectorization report
  gelu_grad_loop(x, y);
  // Values whose results are exact: zeros, infinities, NaN, overflow, underflow to zero,
  // exp of a tiny x (1), erf's and tanh's saturated tails (1), tanh of a tiny x (x).
  const float exact[3][11] = {{0.0f, -0.0f, INFINITY, -INFINITY, NAN, 88.7229f, 1000.0f, -104.5f, -1000.0f, 1e-30f, -1e-10f},
                              {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 3.95f, -3.95f, 10.0f, -1000.0f},
                              {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 9.5f, -20.0f, 1000.0f, 1e-30f, -1e-40f}};
  const int count[3] = {11, 9, 10};
  for (int which = 0; which < 3; ++which)
    for (int i = 0; i < count[which]; ++i) {
      x[0] = exact[which][i];
      fns[which].loop(x, y);
      const float want = fns[which].libm(x[0]);
      unsigned a, b;
      std::memcpy(&a, &y[0], 4);
      std::memcpy(&b, &want, 4);
      std::printf("special %s(%.9g) %x libm %x\n", fns[which].name, x[0], a, b);
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

TEST(PreludeMath, ExpErfAndTanhStayWithinAFewUlpsOfLibm) {
  const Built& b = built();
  std::istringstream in(b.output);
  for (const auto& [fn, bound] : {std::pair<std::string, double>{"exp", 1.0}, {"erf", 3.0}, {"tanh", 2.0}}) {
    std::string name, at;
    double worst = -1;
    in >> name >> worst >> at;
    EXPECT_EQ(name, fn) << b.output;
    EXPECT_GE(worst, 0.0) << b.output;
    EXPECT_LE(worst, bound) << fn << " is " << worst << " ulps from libm at " << at;
  }
}

TEST(PreludeMath, TheInterpreterComputesTheSameBits) {
  // The same sweep and hash as the program's, over the interpreter's functions.
  float (*const fns[3])(float) = {kiln_math::exp_f32, kiln_math::erf_f32, kiln_math::tanh_f32};
  unsigned long long hash[3];
  // The program runs whole batches of 4096 while a batch starts below 2^32 (wrapping at the end).
  const uint64_t batch = 4096 * 97, values = ((uint64_t{1} << 32) + batch - 1) / batch * 4096;
  for (int f = 0; f < 3; ++f) {
    hash[f] = 1469598103934665603ull;
    for (uint64_t k = 0; k < values; ++k) {
      float x;
      const auto bits = static_cast<uint32_t>(k * 97);
      std::memcpy(&x, &bits, 4);
      const float y = fns[f](x);
      uint32_t b;
      std::memcpy(&b, &y, 4);
      hash[f] = (hash[f] ^ b) * 1099511628211ull;
    }
  }
  char want[96];
  std::snprintf(want, sizeof want, "bits %llx %llx %llx\n", hash[0], hash[1], hash[2]);
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
  EXPECT_EQ(seen, 30) << built().output;
}

TEST(PreludeMath, LoopsUsingThemVectorize) {
  const Built& b = built();
  for (const char* marker :
       {"KILN-EXP-LOOP", "KILN-ERF-LOOP", "KILN-TANH-LOOP", "KILN-GELU-LOOP", "KILN-GELU-GRAD-LOOP"}) {
    const std::string where = "math.cpp:" + std::to_string(line_of(b.source, marker)) + ":";
    bool vectorized = false;
    std::istringstream in(b.vec_info);
    for (std::string line; std::getline(in, line);)
      vectorized |= line.find(where) != std::string::npos && line.find("loop vectorized") != std::string::npos;
    EXPECT_TRUE(vectorized) << marker << " (" << where << ") is not vectorized; the compiler said:\n" << b.vec_info;
  }
}

// GELU and the factor of its derivative against the formulas in double (x Phi(x) and
// Phi(x) + x phi(x), Phi from erfc so that the negative tail is exact) over every 997th
// float with |x| < 20: within float rounding of the rational fit (kiln/ir/float_math.h),
// errors scaled by max(1, |x|) as the products with x scale them; exact where saturated.
TEST(PreludeMath, GeluAndItsDerivativeStayNearTheFormulas) {
  double worst_gelu = 0, worst_factor = 0;
  float at_gelu = 0, at_factor = 0;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 997) {
    const auto bits = static_cast<uint32_t>(u);
    float x;
    std::memcpy(&x, &bits, 4);
    if (!(std::fabs(x) < 20.0f)) continue;
    const double v = x, cdf = 0.5 * std::erfc(-v / std::sqrt(2.0));
    const double pdf = std::exp(-v * v / 2) / std::sqrt(2 * M_PI), scale = std::max(1.0, std::fabs(v));
    const double eg = std::fabs(kiln_math::gelu_f32(x) - v * cdf) / scale;
    const double ef = std::fabs(kiln_math::gelu_grad_factor_f32(x) - (cdf + v * pdf)) / scale;
    if (eg > worst_gelu) worst_gelu = eg, at_gelu = x;
    if (ef > worst_factor) worst_factor = ef, at_factor = x;
  }
  EXPECT_LE(worst_gelu, 3e-7) << "gelu at " << at_gelu;
  EXPECT_LE(worst_factor, 6e-7) << "gelu's derivative at " << at_factor;
  for (const float x : {5.66f, 7.0f, 1e30f}) {
    EXPECT_EQ(kiln_math::gelu_f32(x), x);
    EXPECT_EQ(kiln_math::gelu_f32(-x), 0.0f);
    EXPECT_EQ(kiln_math::gelu_grad_factor_f32(x), 1.0f);
    EXPECT_EQ(kiln_math::gelu_grad_factor_f32(-x), 0.0f);
  }
  EXPECT_EQ(kiln_math::gelu_f32(0.0f), 0.0f);
  EXPECT_EQ(kiln_math::gelu_grad_factor_f32(0.0f), 0.5f);
  EXPECT_TRUE(std::isnan(kiln_math::gelu_f32(NAN)));
  EXPECT_TRUE(std::isnan(kiln_math::gelu_grad_factor_f32(NAN)));
  // No step at the edge where the fit gives way to 0 and 1.
  const float edge = kiln_math::kGeluEdge, below = std::nextafter(edge, 0.0f);
  EXPECT_NEAR(kiln_math::gelu_grad_factor_f32(below), 1.0, 1e-5);
  EXPECT_NEAR(kiln_math::gelu_f32(-below), 0.0, 1e-6);
}

}  // namespace
}  // namespace kiln::cpu
