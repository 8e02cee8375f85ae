// The random op (ir/philox.h): statistics, the same bits on both backends, a pure
// function of (seed, step, rank, stream, element), and array constants.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/backend/compiler.h"
#include "kiln/base/error.h"
#include "kiln/ir/text.h"
#include "kiln/ir/ops.h"
#include "kiln/backend/runtime.h"
#include "support/backend_compare.h"

namespace kiln {
namespace {

struct RandomGraph {
  Graph g;
  RandomGraph(Shape shape, const std::string& dist, int64_t stream, double seed = 7, double rank = 0) {
    const Tensor s = hyperparameter(g, seed, DType::i64);
    const Tensor r = hyperparameter(g, rank, DType::i64);
    const Tensor step = variable(g, "global_step", DType::i64, {});
    const Tensor x = random(s, step, r, std::move(shape), dist, stream);
    g.add_output("x", x.id());
    // A dropout of ones: keep 0.9, scaled by 1/0.9 (the pattern dropout builds).
    g.add_output("kept", select(greater_equal(x, scalar_like(x, 0.1)), scalar_like(x, 1 / 0.9), scalar_like(x, 0)).id());
  }
};

Array run_interp(const Graph& g, int64_t step, const char* out = "x") {
  Variables vars;
  Array gs(DType::i64, {});
  gs.set(0, static_cast<double>(step));
  vars["global_step"] = gs;
  return make_interpreter(g)->run({}, vars).at(out);
}

TEST(Random, UniformKeepRateIsWithinFourSigmaOverAMillionDraws) {
  RandomGraph r({1000, 1000}, "uniform", 3);
  const Array x = run_interp(r.g, 5);
  int64_t kept = 0;
  double lo = 1, hi = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.get(i);
    kept += v >= 0.1;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const double n = 1e6, p = 0.9, sigma = std::sqrt(n * p * (1 - p));
  EXPECT_LE(std::fabs(static_cast<double>(kept) - n * p), 4 * sigma) << kept;
  EXPECT_GE(lo, 0.0);
  EXPECT_LT(hi, 1.0);
}

TEST(Random, NormalAndTruncatedNormalHaveTheirMoments) {
  for (const char* dist : {"normal", "truncated_normal"}) {
    RandomGraph r({200000}, dist, 4);
    const Array x = run_interp(r.g, 0);
    double sum = 0, sq = 0, max_abs = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      sum += x.get(i);
      sq += x.get(i) * x.get(i);
      max_abs = std::max(max_abs, std::fabs(x.get(i)));
    }
    const double mean = sum / x.numel(), sd = std::sqrt(sq / x.numel() - mean * mean);
    EXPECT_NEAR(mean, 0, 0.01) << dist;
    if (std::string(dist) == "normal") {
      EXPECT_NEAR(sd, 1, 0.01);
      EXPECT_GT(max_abs, 3.5);
    } else {
      EXPECT_NEAR(sd, 0.8796, 0.01);
      EXPECT_LE(max_abs, 2.0);
    }
  }
}

TEST(Random, APureFunctionOfSeedStepRankAndStream) {
  const Array a = run_interp(RandomGraph({64}, "uniform", 1).g, 10);
  EXPECT_EQ(run_interp(RandomGraph({64}, "uniform", 1).g, 10).to_floats(), a.to_floats()) << "reproducible";
  EXPECT_NE(run_interp(RandomGraph({64}, "uniform", 1).g, 11).to_floats(), a.to_floats()) << "another step";
  EXPECT_NE(run_interp(RandomGraph({64}, "uniform", 2).g, 10).to_floats(), a.to_floats()) << "another stream";
  EXPECT_NE(run_interp(RandomGraph({64}, "uniform", 1, 8).g, 10).to_floats(), a.to_floats()) << "another seed";
  EXPECT_NE(run_interp(RandomGraph({64}, "uniform", 1, 7, 1).g, 10).to_floats(), a.to_floats()) << "another rank";
  // Element i does not depend on the tensor's size: a prefix of a larger draw.
  const Array big = run_interp(RandomGraph({128}, "uniform", 1).g, 10);
  for (int64_t i = 0; i < 64; ++i) EXPECT_EQ(big.get(i), a.get(i));
}

TEST(Random, TheCompiledStepDrawsTheInterpretersBits) {
  for (const char* dist : {"uniform", "normal", "truncated_normal"}) {
    RandomGraph r({3, 5, 7, 11}, dist, 9);
    Variables init;
    Array gs(DType::i64, {});
    gs.set(0, 123456789);
    init["global_step"] = gs;
    const testkit::BothRuns runs = testkit::run_both(r.g, {}, init, PrecisionPolicy::original, 2);
    for (const char* out : {"x", "kept"}) {
      const Array& a = runs.interp[0].at(out);
      const Array& b = runs.compiled[0].at(out);
      ASSERT_EQ(a.numel(), b.numel());
      for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.get(i), b.get(i)) << dist << " " << out << " element " << i;
    }
  }
}

TEST(Random, BadInputsAreGraphErrors) {
  Graph g;
  const Tensor s = hyperparameter(g, 1, DType::i64);
  const Tensor f = hyperparameter(g, 1, DType::f32);
  EXPECT_THROW(random(s, f, s, {2}, "uniform", 0), GraphError);
  EXPECT_THROW(random(s, s, s, {2}, "gamma", 0), GraphError);
  EXPECT_THROW(hyperparameter(g, 0.5, DType::i64), GraphError);
}

TEST(ConstantValues, ArraysOfDifferingValuesOnBothBackendsAndNotInTheCode) {
  Array table(DType::f32, {2, 3});
  for (int i = 0; i < 6; ++i) table.set(i, 0.25 * i - 0.5);
  Array ints(DType::i32, {4});
  for (int i = 0; i < 4; ++i) ints.set(i, i * 1000 - 7);
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {2, 3});
  g.add_output("y", (x * constant_values(g, table)).id());
  g.add_output("i", (constant_values(g, ints) + constant(g, 1, DType::i32)).id());
  Array xv(DType::f32, {2, 3});
  for (int i = 0; i < 6; ++i) xv.set(i, 2);
  const testkit::BothRuns r = testkit::run_both(g, {{"x", xv}}, {}, PrecisionPolicy::original);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r.compiled[0].at("y").get(i), 2 * (0.25 * i - 0.5));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r.compiled[0].at("i").get(i), i * 1000 - 6);
  testkit::expect_same(r, [](const std::string&) { return testkit::Tolerance{0, 0}; });
  // The structure (what the cache keys on) does not hold the values.
  Array other = table;
  other.set(0, 99);
  Graph h;
  const Tensor hx = placeholder(h, "x", DType::f32, {2, 3});
  h.add_output("y", (hx * constant_values(h, other)).id());
  h.add_output("i", (constant_values(h, ints) + constant(h, 1, DType::i32)).id());
  EXPECT_EQ(print_graph(g, TextForm::structure), print_graph(h, TextForm::structure));
  EXPECT_NE(print_graph(g, TextForm::canonical), print_graph(h, TextForm::canonical));
}

}  // namespace
}  // namespace kiln
