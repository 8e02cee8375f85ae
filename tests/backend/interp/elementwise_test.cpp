// Interpreter elementwise kernels against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/base/error.h"
#include "kiln/ir/ops.h"
#include "support/test_arrays.h"

namespace kiln {
namespace {

using testkit::eval;
using testkit::f32;

using Floats = std::vector<float>;

TEST(InterpElementwise, BroadcastAdd) {
  Graph g;
  Tensor a = placeholder(g, "a", DType::f32, {2, 3});
  Tensor b = placeholder(g, "b", DType::f32, {3});
  Tensor c = placeholder(g, "c", DType::f32, {2, 1});
  const Feeds feeds{{"a", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", f32({3}, {10, 20, 30})}, {"c", f32({2, 1}, {100, 200})}};
  EXPECT_EQ(eval(g, (a + b).id(), feeds).to_floats(), (Floats{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(eval(g, (b + c).id(), feeds).to_floats(), (Floats{110, 120, 130, 210, 220, 230}));
  const Array s = eval(g, (c - 1.0).id(), feeds);
  EXPECT_EQ(s.shape(), (Shape{2, 1}));
  EXPECT_EQ(s.to_floats(), (Floats{99, 199}));
}

TEST(InterpElementwise, BinaryArithmetic) {
  Graph g;
  Tensor a = placeholder(g, "a", DType::f32, {4});
  Tensor b = placeholder(g, "b", DType::f32, {4});
  const Feeds feeds{{"a", f32({4}, {1, -2, 3, 4})}, {"b", f32({4}, {2, 2, -1, 0.5f})}};
  EXPECT_EQ(eval(g, (a - b).id(), feeds).to_floats(), (Floats{-1, -4, 4, 3.5f}));
  EXPECT_EQ(eval(g, (a * b).id(), feeds).to_floats(), (Floats{2, -4, -3, 2}));
  EXPECT_EQ(eval(g, (a / b).id(), feeds).to_floats(), (Floats{0.5f, -1, -3, 8}));
  EXPECT_EQ(eval(g, maximum(a, b).id(), feeds).to_floats(), (Floats{2, 2, 3, 4}));
  EXPECT_EQ(eval(g, minimum(a, b).id(), feeds).to_floats(), (Floats{1, -2, -1, 0.5f}));
  EXPECT_EQ(eval(g, pow(a, b).id(), feeds).to_floats(), (Floats{1, 4, 1.0f / 3, 2}));
}

TEST(InterpElementwise, UnaryMatchesTheStandardLibrary) {
  const Floats xs = {-1.5f, -0.25f, 0.0f, 0.5f, 2.0f};
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {5});
  const Feeds feeds{{"x", f32({5}, xs)}};
  struct U { const char* name; Tensor (*op)(const Tensor&); float (*ref)(float); };
  const U cases[] = {
      {"neg", neg, [](float v) { return -v; }},
      {"abs", abs, [](float v) { return std::fabs(v); }},
      {"sign", sign, [](float v) { return v > 0 ? 1.0f : v < 0 ? -1.0f : 0.0f; }},
      {"exp", exp, [](float v) { return std::exp(v); }},
      {"tanh", tanh, [](float v) { return std::tanh(v); }},
      {"sigmoid", sigmoid, [](float v) { return float(1 / (1 + std::exp(-double(v)))); }},
      {"relu", relu, [](float v) { return v > 0 ? v : 0.0f; }},
      {"gelu", gelu, [](float v) { return float(0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))); }},
      {"erf", erf, [](float v) { return std::erf(v); }},
      {"cos", cos, [](float v) { return std::cos(v); }},
  };
  for (const U& u : cases) {
    const Floats got = eval(g, u.op(x).id(), feeds).to_floats();
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(got[i], u.ref(xs[i]), 1e-6) << u.name << "(" << xs[i] << ")";
  }
  Tensor p = placeholder(g, "p", DType::f32, {3});
  const Feeds pos{{"p", f32({3}, {0.25f, 1, 4})}};
  EXPECT_EQ(eval(g, log(p).id(), pos).to_floats(), (Floats{std::log(0.25f), 0, std::log(4.0f)}));
  EXPECT_EQ(eval(g, sqrt(p).id(), pos).to_floats(), (Floats{0.5f, 1, 2}));
  EXPECT_EQ(eval(g, rsqrt(p).id(), pos).to_floats(), (Floats{2, 1, 0.5f}));
}

// gelu's gradient: gy * (Phi(x) + x * phi(x)), against the formula in double; in bfloat16
// it is computed in float32 and rounded once, so it equals the float32 result rounded.
TEST(InterpElementwise, GeluGradIsTheDerivativeRoundedOnce) {
  const Floats xs = {-3.5f, -1.25f, -0.3f, 0.0f, 0.7f, 1.9f, 4.0f};
  const Floats gys = {0.5f, -2.0f, 1.0f, 3.0f, -0.75f, 1.5f, 2.0f};
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {7});
  Tensor gy = placeholder(g, "gy", DType::f32, {7});
  const Feeds feeds{{"x", f32({7}, xs)}, {"gy", f32({7}, gys)}};
  const Floats got = eval(g, gelu_grad(x, gy).id(), feeds).to_floats();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double v = xs[i];
    const double want = gys[i] * (0.5 * (1 + std::erf(v / std::sqrt(2.0))) + v * std::exp(-v * v / 2) / std::sqrt(2 * M_PI));
    EXPECT_NEAR(got[i], want, 2e-6 * std::max(1.0, std::fabs(want))) << "x=" << xs[i];
  }
  Graph h;
  Tensor xb = cast(placeholder(h, "x", DType::f32, {7}), DType::bf16);
  Tensor gb = cast(placeholder(h, "gy", DType::f32, {7}), DType::bf16);
  const Array low = eval(h, gelu_grad(xb, gb).id(), feeds);
  EXPECT_EQ(low.dtype(), DType::bf16);
  const Floats xr = eval(h, cast(xb, DType::f32).id(), feeds).to_floats();
  const Floats gr = eval(h, cast(gb, DType::f32).id(), feeds).to_floats();
  Graph k;
  Tensor xk = placeholder(k, "x", DType::f32, {7});
  Tensor gk = placeholder(k, "gy", DType::f32, {7});
  const Feeds rounded{{"x", f32({7}, xr)}, {"gy", f32({7}, gr)}};
  EXPECT_EQ(low.to_floats(), eval(k, cast(cast(gelu_grad(xk, gk), DType::bf16), DType::f32).id(), rounded).to_floats());
  Tensor i = placeholder(k, "i", DType::i32, {7});
  EXPECT_THROW(gelu_grad(i, i), GraphError);
}

TEST(InterpElementwise, ComparisonsGiveBools) {
  Graph g;
  Tensor a = placeholder(g, "a", DType::f32, {3});
  Tensor b = placeholder(g, "b", DType::f32, {});
  const Feeds feeds{{"a", f32({3}, {1, 2, 3})}, {"b", f32({}, {2})}};
  auto cmp = [&](Tensor (*op)(const Tensor&, const Tensor&)) {
    const Array r = eval(g, op(a, b).id(), feeds);
    EXPECT_EQ(r.dtype(), DType::boolean);
    return r.to_ints();
  };
  using I = std::vector<int64_t>;
  EXPECT_EQ(cmp(equal), (I{0, 1, 0}));
  EXPECT_EQ(cmp(not_equal), (I{1, 0, 1}));
  EXPECT_EQ(cmp(less), (I{1, 0, 0}));
  EXPECT_EQ(cmp(less_equal), (I{1, 1, 0}));
  EXPECT_EQ(cmp(greater), (I{0, 0, 1}));
  EXPECT_EQ(cmp(greater_equal), (I{0, 1, 1}));
}

TEST(InterpElementwise, SelectBroadcastsAllThreeInputs) {
  Graph g;
  Tensor c = placeholder(g, "c", DType::f32, {2, 1});
  Tensor a = placeholder(g, "a", DType::f32, {2, 3});
  Tensor zero = constant(g, -1.0);
  const Feeds feeds{{"c", f32({2, 1}, {1, -1})}, {"a", f32({2, 3}, {1, 2, 3, 4, 5, 6})}};
  Tensor s = select(greater(c, constant(g, 0.0)), a, zero);
  EXPECT_EQ(eval(g, s.id(), feeds).to_floats(), (Floats{1, 2, 3, -1, -1, -1}));
}

TEST(InterpElementwise, MaximumPropagatesNaN) {
  Graph g;
  Tensor a = placeholder(g, "a", DType::f32, {2});
  Tensor b = placeholder(g, "b", DType::f32, {2});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Floats r = eval(g, maximum(a, b).id(), {{"a", f32({2}, {nan, 1})}, {"b", f32({2}, {1, nan})}}).to_floats();
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_TRUE(std::isnan(r[1]));
}

TEST(InterpElementwise, IntegerArithmetic) {
  Graph g;
  Tensor a = placeholder(g, "a", DType::i32, {3});
  Tensor b = placeholder(g, "b", DType::i32, {3});
  const Feeds feeds{{"a", testkit::ints(DType::i32, {3}, {7, -7, 5})}, {"b", testkit::ints(DType::i32, {3}, {2, 2, 0})}};
  const Array sum = eval(g, (a + b).id(), feeds);
  EXPECT_EQ(sum.dtype(), DType::i32);
  EXPECT_EQ(sum.to_ints(), (std::vector<int64_t>{9, -5, 5}));
  // Division truncates toward zero; by zero it gives 0, as compiled code does.
  EXPECT_EQ(eval(g, (a / b).id(), feeds).to_ints(), (std::vector<int64_t>{3, -3, 0}));
}

TEST(InterpElementwise, CastFloatToIntTruncatesAndMapsNaNToZero) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {7});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Feeds feeds{{"x", f32({7}, {1.7f, -1.7f, 2.5f, -0.5f, nan, 1e10f, -1e10f})}};
  EXPECT_EQ(eval(g, cast(x, DType::i32).id(), feeds).to_ints(),
            (std::vector<int64_t>{1, -1, 2, 0, 0, 2147483647, -2147483648LL}));
  EXPECT_EQ(eval(g, cast(x, DType::i64).id(), feeds).to_ints(),
            (std::vector<int64_t>{1, -1, 2, 0, 0, 10000000000LL, -10000000000LL}));
}

TEST(InterpElementwise, CastToBoolIsNonZero) {
  Graph g;
  Tensor a = placeholder(g, "a", DType::f32, {5});
  const Feeds feeds{{"a", f32({5}, {0.0f, 0.5f, -0.25f, -0.0f, std::numeric_limits<float>::quiet_NaN()})}};
  EXPECT_EQ(eval(g, cast(a, DType::boolean).id(), feeds).to_ints(), (std::vector<int64_t>{0, 1, 1, 0, 1}));
}

TEST(InterpElementwise, CastIntToFloat) {
  Graph g;
  Tensor i = placeholder(g, "i", DType::i64, {3});
  const Array r = eval(g, cast(i, DType::f32).id(), {{"i", testkit::ints(DType::i64, {3}, {-3, 0, 16777217})}});
  EXPECT_EQ(r.to_floats(), (Floats{-3, 0, 16777216}));  // nearest float32
}

TEST(InterpElementwise, Bfloat16ResultsAreStoredRounded) {
  Graph g;
  Tensor a = placeholder(g, "a", DType::bf16, {3});
  Tensor b = placeholder(g, "b", DType::bf16, {3});
  // 2^-9 and 2^-8 are below half an ulp of 1 (or exactly half, a tie to even);
  // 2^-7 is one ulp.
  const Feeds feeds{{"a", Array::from_floats(DType::bf16, {3}, Floats{1, 1, 1})},
                    {"b", Array::from_floats(DType::bf16, {3}, Floats{0x1p-9f, 0x1p-8f, 0x1p-7f})}};
  const Array r = eval(g, (a + b).id(), feeds);
  ASSERT_EQ(r.dtype(), DType::bf16);
  EXPECT_EQ(r.to_floats(), (Floats{1, 1, 1 + 0x1p-7f}));
  EXPECT_EQ(r.data<uint16_t>()[0], 0x3f80);
  EXPECT_EQ(r.data<uint16_t>()[2], 0x3f81);
}

TEST(InterpElementwise, Float16OverflowsToInfinity) {
  Graph g;
  Tensor a = placeholder(g, "a", DType::f16, {3});
  Tensor b = placeholder(g, "b", DType::f16, {3});
  // 65504 is the largest f16; 65504 + 16 = 65520 is the tie with 65536, which overflows.
  const Feeds feeds{{"a", Array::from_floats(DType::f16, {3}, Floats{65504, 65504, -65504})},
                    {"b", Array::from_floats(DType::f16, {3}, Floats{8, 16, -16})}};
  const Array r = eval(g, (a + b).id(), feeds);
  ASSERT_EQ(r.dtype(), DType::f16);
  const Floats v = r.to_floats();
  EXPECT_EQ(v[0], 65504.0f);
  EXPECT_EQ(v[1], std::numeric_limits<float>::infinity());
  EXPECT_EQ(v[2], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(r.data<uint16_t>()[1], 0x7c00);
}

TEST(InterpElementwise, Float16UnaryResultsAreRounded) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f16, {1});
  const Array r = eval(g, exp(x).id(), {{"x", Array::from_floats(DType::f16, {1}, Floats{1})}});
  EXPECT_EQ(r.to_floats()[0], round_to(DType::f16, std::exp(1.0f)));
  EXPECT_NE(r.to_floats()[0], std::exp(1.0f));
}

}  // namespace
}  // namespace kiln
