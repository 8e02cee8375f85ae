// Subnormal floats in steps (backend/denormals.h): flushed to zero on both backends, in
// kiln's loops and in oneDNN's products, by every thread of the team; the caller's own
// floating-point mode comes back after the step; KILN_FLUSH_DENORMALS=0 keeps them, and a
// value other than 0 or 1 is an error naming the variable. The environment is read once
// per process, so the two environment cases run in a process of their own (gtest's
// threadsafe death tests start this binary again for the one test).
#include <gtest/gtest.h>
#include <xmmintrin.h>

#include <cstdlib>
#include <string>

#include "kiln/backend/compiler.h"
#include "kiln/base/error.h"
#include "kiln/ir/ops.h"
#include "kiln/backend/runtime.h"
#include "support/backend_compare.h"

namespace kiln {
namespace {

Array filled(Shape shape, float value) {
  Array a(DType::f32, std::move(shape));
  for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = value;
  return a;
}

struct Tiny {
  Graph g;
  Feeds feeds;
  Tiny() {
    // 256x128: large enough that the loops run on the whole OpenMP team.
    const Tensor tiny = placeholder(g, "tiny", DType::f32, {256, 128});    // subnormal inputs
    const Tensor small = placeholder(g, "small", DType::f32, {256, 128});  // normal, squares subnormal
    const Tensor w = placeholder(g, "w", DType::f32, {128, 128});
    g.add_output("read", (tiny * 1e30).id());          // DAZ: 0, else 1e-9
    g.add_output("made", (small * small).id());        // FTZ: 0, else 1e-40
    g.add_output("product", matmul(tiny, w).id());    // oneDNN, DAZ: 0, else 128e-39
    feeds = {{"tiny", filled({256, 128}, 1e-39f)}, {"small", filled({256, 128}, 1e-20f)}, {"w", filled({128, 128}, 1.0f)}};
  }
};

// How many elements of every output of both backends are zero, and how many there are.
std::pair<int64_t, int64_t> zeros(const testkit::BothRuns& r) {
  int64_t zero = 0, all = 0;
  for (const Fetches* f : {&r.interp.at(0), &r.compiled.at(0)})
    for (const auto& [name, a] : *f)
      for (int64_t i = 0; i < a.numel(); ++i, ++all) zero += a.data<float>()[i] == 0.0f;
  return {zero, all};
}

// Child processes of the tests below (each a process of its own: the environment is read
// once, and the OpenMP team must start before the first step does): the exit code says
// what they saw.
[[noreturn]] void run_flushing() {
  // A team that exists before any step, its threads in IEEE mode: steps must set theirs.
  int threads = 0;
#pragma omp parallel
  {
#pragma omp atomic
    ++threads;
  }
  if (threads < 2) std::exit(0);  // one thread: nothing to check about a team
  constexpr unsigned kFlags = 0x3f;  // the exception flags, sticky: any float work raises them
  const unsigned before = _mm_getcsr() & ~kFlags;
  Tiny t;
  const auto r = testkit::run_both(t.g, t.feeds, {}, PrecisionPolicy::original);
  const auto [zero, all] = zeros(r);
  if (zero != all) std::exit(1);  // a subnormal input read as itself or a subnormal result kept
  if ((_mm_getcsr() & ~kFlags) != before) std::exit(2);  // the caller's modes not given back
  volatile float a = 1e-20f;
  std::exit(a * a > 0.0f ? 0 : 3);  // 3: the caller's own arithmetic flushes
}

TEST(Denormals, StepsFlushThemOnBothBackendsAndEveryThreadAndGiveTheCallerItsModeBack) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_flushing(), ::testing::ExitedWithCode(0), "");
}

[[noreturn]] void run_keeping() {
  setenv("KILN_FLUSH_DENORMALS", "0", 1);
  Tiny t;
  const auto r = testkit::run_both(t.g, t.feeds, {}, PrecisionPolicy::original);
  const auto [zero, all] = zeros(r);
  const float product = r.compiled.at(0).at("product").data<float>()[0];
  const float made = r.interp.at(0).at("made").data<float>()[0];
  std::exit(zero == 0 && all > 0 && product > 1e-37f && made > 0.0f && made < 1e-38f ? 0 : 1);
}

[[noreturn]] void run_with_a_wrong_value() {
  setenv("KILN_FLUSH_DENORMALS", "yes", 1);
  Tiny t;
  try {
    testkit::run_both(t.g, t.feeds, {}, PrecisionPolicy::original);
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    const bool named = m.find("[KILN_FLUSH_DENORMALS] 'yes' is not valid") != std::string::npos;
    std::exit(named && m.find("give 1") != std::string::npos ? 0 : 2);
  }
  std::exit(1);
}

TEST(Denormals, KeptWhenTheEnvironmentSaysSo) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_keeping(), ::testing::ExitedWithCode(0), "");
}

TEST(Denormals, AnotherValueIsAnErrorNamingTheVariable) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_with_a_wrong_value(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace kiln
