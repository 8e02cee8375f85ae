// Corners of the compiled backend: empty tensors, and integer semantics where the
// compiled code and the interpreter once disagreed (regression tests).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "kiln/ir/ops.h"
#include "support/backend_compare.h"
#include "support/test_arrays.h"

namespace kiln {
namespace {

using testkit::Tolerance;

// Exact int64 values (Array::from_ints goes through double, which rounds above 2^53).
Array raw_i64(Shape shape, std::vector<int64_t> v) {
  Array a(DType::i64, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) a.data<int64_t>()[i] = v[i];
  return a;
}

testkit::BothRuns expect_backends_agree(const Graph& g, const Feeds& feeds) {
  testkit::BothRuns r = testkit::run_both(g, feeds, {}, PrecisionPolicy::original, 2);
  testkit::expect_same(r, [](const std::string&) { return Tolerance{}; });
  return r;
}

// Agreement is not enough: both backends must give the documented integer results.
void expect_ints(const testkit::BothRuns& r, const std::string& output, const std::vector<int64_t>& want) {
  for (const auto* run : {&r.interp, &r.compiled}) {
    const Array& y = run->at(0).at(output);
    ASSERT_EQ(y.numel(), static_cast<int64_t>(want.size()));
    for (int64_t i = 0; i < y.numel(); ++i) {
      const int64_t got = y.dtype() == DType::i64 ? y.data<int64_t>()[i] : y.data<int32_t>()[i];
      EXPECT_EQ(got, want[static_cast<size_t>(i)]) << (run == &r.interp ? "interpreter" : "compiled") << " [" << i << "]";
    }
  }
}

TEST(CompiledEdge, EmptyTensorsAndEmptyMatmul) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {2, 3});
  const Tensor a = placeholder(g, "a", DType::f32, {2, 0});
  const Tensor b = placeholder(g, "b", DType::f32, {0, 3});
  // A dead intermediate first, so the arena slot the matmul result may reuse is dirty.
  g.add_output("sx", reduce_sum(exp(x) * x).id());
  g.add_output("mm", (matmul(a, b) + x).id());  // K = 0: a sum of nothing is zero
  g.add_output("empty", (exp(a) + 1.0).id());
  g.add_output("sum_empty", reduce_sum(a, {1}).id());
  g.add_output("columns_of_nothing", reduce_sum(a, {0}).id());  // no column: no chunk to size
  g.add_output("columns_of_no_rows", reduce_sum(b, {0}).id());  // zeros
  expect_backends_agree(g, {{"x", testkit::f32({2, 3}, {1, 2, 3, 4, 5, 6})},
                            {"a", Array(DType::f32, {2, 0})},
                            {"b", Array(DType::f32, {0, 3})}});
}

// Fixed bug (kept as a regression test): cast i64 -> i32 of an out-of-range value. The interpreter saturates
// (src/backend/interp/elementwise.cpp, interp_cast: the float->integer branch tests only
// the target type, so integer sources saturate too); the compiled code wraps
// (src/backend/cpu/codegen/expr.cpp, Op::cast: static_cast<int32_t>). One of them must
// change: wrapping is what TensorFlow and NumPy do for integer->integer casts.
TEST(CompiledEdge, CastI64ToI32OutOfRangeAgrees) {
  Graph g;
  const Tensor a = placeholder(g, "a", DType::i64, {4});
  g.add_output("y", cast(a, DType::i32).id());
  const auto r = expect_backends_agree(g, {{"a", raw_i64({4}, {3000000000LL, -3000000000LL, 1LL << 40, 5})}});
  expect_ints(r, "y", {-1294967296, 1294967296, 0, 5});  // the low 32 bits, two's complement
}

// Fixed bug (kept as a regression test): the interpreter's integer kernels compute in double
// (src/backend/interp/elementwise.cpp binary_int/unary_int use Array::get/set), so i64
// values above 2^53 lose their low bits: (2^53 + 1) + 2 gives 2^53 + 2. The compiled
// code computes in int64_t and is exact. Array::from_ints has the same problem
// (src/ir/array.cpp: set(i, static_cast<double>(v))).
TEST(CompiledEdge, Int64BeyondDoublePrecisionAgrees) {
  Graph g;
  const Tensor a = placeholder(g, "a", DType::i64, {3});
  g.add_output("y", (a + constant(g, 2, DType::i64)).id());
  const auto r = expect_backends_agree(g, {{"a", raw_i64({3}, {(1LL << 53) + 1, (1LL << 60) + 1, -(1LL << 62) - 3})}});
  expect_ints(r, "y", {(1LL << 53) + 3, (1LL << 60) + 3, -(1LL << 62) - 1});
}

// Fixed bug (kept as a regression test): integer overflow. i32 70000 * 65536: the compiled code wraps (292552704); the
// interpreter converts the double 4.6e9 to int32_t, which is undefined behaviour
// (INT_MIN on x86). Fix in the interpreter: compute in int64_t and wrap explicitly.
TEST(CompiledEdge, Int32OverflowAgrees) {
  Graph g;
  const Tensor b = placeholder(g, "b", DType::i32, {3});
  g.add_output("y", (b * constant(g, 65536, DType::i32)).id());
  const auto r = expect_backends_agree(g, {{"b", testkit::ints(DType::i32, {3}, {70000, -5, 3})}});
  expect_ints(r, "y", {292552704, -327680, 196608});  // 4587520000 wraps modulo 2^32
}

// Fixed bug (kept as a regression test): integer division by zero. The interpreter throws "[div] integer division
// by zero"; the compiled code returns 0 (codegen/expr.cpp, Op::div). The backends must
// agree: an error, as TensorFlow's CPU kernel gives, or 0 in both.
TEST(CompiledEdge, IntegerDivisionByZeroAgrees) {
  Graph g;
  const Tensor b = placeholder(g, "b", DType::i32, {3});
  const Tensor z = placeholder(g, "z", DType::i32, {3});
  g.add_output("y", (b / z).id());
  const auto r = expect_backends_agree(
      g, {{"b", testkit::ints(DType::i32, {3}, {7, -5, 3})}, {"z", testkit::ints(DType::i32, {3}, {2, 0, 1})}});
  expect_ints(r, "y", {3, 0, 3});  // division by zero gives 0 on both backends
}

// ReLU lets a NaN through on both backends (a zeroed NaN would hide a diverging run from
// the NaN guard and accelerate_train_mode's divergence guard).
TEST(CompiledEdge, ReluPassesNaNThrough) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {4});
  g.add_output("y", relu(x).id());
  const Feeds feeds{{"x", testkit::f32({4}, {std::nanf(""), -1.0f, 2.0f, -std::numeric_limits<float>::infinity()})}};
  const testkit::BothRuns r = testkit::run_both(g, feeds, {}, PrecisionPolicy::original);
  for (const auto* run : {&r.interp, &r.compiled}) {
    const std::vector<float> y = run->at(0).at("y").to_floats();
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_EQ(y[1], 0.0f);
    EXPECT_EQ(y[2], 2.0f);
    EXPECT_EQ(y[3], 0.0f);
  }
}

}  // namespace
}  // namespace kiln
