// Variable initialisers against TensorFlow's formulas (tf.keras.initializers /
// VarianceScaling, _compute_fans): uniform limits and normal standard deviations of
// dense, HWIO and OIHW kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kiln/base/error.h"
#include "kiln/ir/ops.h"
#include "kiln/backend/runtime.h"

namespace kiln {
namespace {

struct Stats {
  double max_abs = 0, mean = 0, stddev = 0;
};

Stats draw(const Shape& shape, const Init& init) {
  Graph g;
  variable(g, "w", DType::f32, shape, init);
  Variables vars;
  initialize_variables(g, vars);
  const Array& a = vars.at("w");
  Stats s;
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double v = a.get(i);
    s.max_abs = std::max(s.max_abs, std::fabs(v));
    sum += v;
    sq += v * v;
  }
  const double n = static_cast<double>(a.numel());
  s.mean = sum / n;
  s.stddev = std::sqrt(sq / n - s.mean * s.mean);
  return s;
}

// TensorFlow's _compute_fans: [in, out] for rank 2; rank > 2 is [..., in, out], the
// receptive field the product of the leading axes.
std::pair<double, double> tf_fans(const Shape& s) {
  if (s.size() == 2) return {double(s[0]), double(s[1])};
  double rf = 1;
  for (size_t i = 0; i + 2 < s.size(); ++i) rf *= double(s[i]);
  return {s[s.size() - 2] * rf, s[s.size() - 1] * rf};
}
// kiln's filters [out, in, kh, kw].
std::pair<double, double> oihw_fans(const Shape& s) {
  double rf = 1;
  for (size_t i = 2; i < s.size(); ++i) rf *= double(s[i]);
  return {s[1] * rf, s[0] * rf};
}

struct Case {
  Shape shape;
  std::string layout;  // what the kernel is created with
};

const Case kCases[] = {
    {{64, 32}, ""},            {{784, 1024}, "HWIO"},     {{5, 5, 32, 64}, "HWIO"}, {{11, 11, 64, 96}, "HWIO"},
    {{5, 5, 1, 32}, "HWIO"},   {{3, 3, 16, 8}, "HWIO"},   {{64, 32, 5, 5}, ""},     {{32, 1, 5, 5}, "OIHW"},
    {{7, 16, 24}, "HWIO"},
};

std::pair<double, double> expected_fans(const Case& c) {
  return c.layout == "HWIO" || c.shape.size() == 2 ? tf_fans(c.shape) : oihw_fans(c.shape);
}

TEST(Initializers, UniformLimitsFollowTheKernelsLayout) {
  for (const Case& c : kCases) {
    const auto [fan_in, fan_out] = expected_fans(c);
    const double glorot = std::sqrt(6.0 / (fan_in + fan_out)), he = std::sqrt(6.0 / fan_in);
    const Stats g = draw(c.shape, Init::glorot_uniform(3).with_layout(c.layout));
    EXPECT_LE(g.max_abs, glorot) << shape_str(c.shape) << " " << c.layout;
    EXPECT_GE(g.max_abs, 0.97 * glorot) << shape_str(c.shape) << " " << c.layout;
    const Stats h = draw(c.shape, Init::he_uniform(4).with_layout(c.layout));
    EXPECT_LE(h.max_abs, he) << shape_str(c.shape);
    EXPECT_GE(h.max_abs, 0.97 * he) << shape_str(c.shape);
    for (const char* mode : {"fan_in", "fan_out", "fan_avg"}) {
      const double n = std::string(mode) == "fan_in" ? fan_in : std::string(mode) == "fan_out" ? fan_out : (fan_in + fan_out) / 2;
      const double limit = std::sqrt(3.0 * 2.5 / n);
      const Stats v = draw(c.shape, Init::variance_scaling(2.5, mode, "uniform", 5).with_layout(c.layout));
      EXPECT_LE(v.max_abs, limit) << shape_str(c.shape) << " " << mode;
      EXPECT_GE(v.max_abs, 0.97 * limit) << shape_str(c.shape) << " " << mode;
    }
  }
}

TEST(Initializers, NormalStandardDeviationsFollowTheKernelsLayout) {
  for (const Case& c : kCases) {
    const auto [fan_in, fan_out] = expected_fans(c);
    const Stats g = draw(c.shape, Init::glorot_normal(3).with_layout(c.layout));
    EXPECT_NEAR(g.stddev, std::sqrt(2.0 / (fan_in + fan_out)), 0.06 * std::sqrt(2.0 / (fan_in + fan_out)))
        << shape_str(c.shape);
    // TensorFlow's truncated form: stddev sqrt(scale/n)/0.8796 cut at 2 of them, so the
    // draws have standard deviation sqrt(scale/n) and never exceed 2 * sqrt(scale/n)/0.8796.
    const double target = std::sqrt(2.0 / fan_in);
    const Stats t = draw(c.shape, Init::variance_scaling(2.0, "fan_in", "truncated_normal", 6).with_layout(c.layout));
    EXPECT_NEAR(t.stddev, target, 0.06 * target) << shape_str(c.shape);
    EXPECT_LE(t.max_abs, 2 * target / 0.87962566103423978) << shape_str(c.shape);
  }
}

TEST(Initializers, TruncatedNormalStaysWithinTwoStandardDeviations) {
  const Stats s = draw({200000}, Init::truncated_normal(0.5, 0.1, 9));
  EXPECT_NEAR(s.mean, 0.5, 0.001);
  EXPECT_LE(s.max_abs, 0.5 + 0.2 + 1e-9);
  EXPECT_NEAR(s.stddev, 0.1 * 0.87962566103423978, 0.002);  // a unit normal cut at +-2 has sd 0.8796
}

TEST(Initializers, TheLayoutOfADenseKernelChangesNothingAndIsNotRecorded) {
  Graph g;
  const Tensor a = variable(g, "a", DType::f32, {10, 20}, Init::glorot_uniform(1).with_layout("HWIO"));
  EXPECT_FALSE(a.node().attrs.has("layout"));
  const Tensor b = variable(g, "b", DType::f32, {3, 3, 10, 20}, Init::glorot_uniform(1).with_layout("HWIO"));
  EXPECT_EQ(b.node().attrs.s("layout"), "HWIO");
}

TEST(Initializers, BadSettingsAreGraphErrorsNamingThem) {
  Graph g;
  EXPECT_THROW(variable(g, "a", DType::f32, {3, 3, 1, 2}, Init::glorot_uniform(1).with_layout("NHWC")), GraphError);
  EXPECT_THROW(variable(g, "b", DType::f32, {4}, Init::variance_scaling(1, "fan_sum", "uniform", 1)), GraphError);
  EXPECT_THROW(variable(g, "c", DType::f32, {4}, Init::variance_scaling(1, "fan_in", "gamma", 1)), GraphError);
  EXPECT_THROW(variable(g, "d", DType::f32, {4}, Init::variance_scaling(0, "fan_in", "uniform", 1)), GraphError);
  EXPECT_THROW(variable(g, "e", DType::f32, {4}, Init::truncated_normal(0, -1, 1)), GraphError);
}

}  // namespace
}  // namespace kiln
