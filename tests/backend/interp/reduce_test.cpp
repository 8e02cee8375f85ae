// Interpreter reductions, argmax and one_hot against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/ir/ops.h"
#include "support/test_arrays.h"

namespace kiln {
namespace {

using testkit::eval;
using testkit::f32;
using Floats = std::vector<float>;
using Ints = std::vector<int64_t>;

class InterpReduce : public ::testing::Test {
 protected:
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {2, 3});
  Feeds feeds{{"x", f32({2, 3}, {1, 5, 3, 4, 2, 6})}};
  Array run(const Tensor& t) { return eval(g, t.id(), feeds); }
};

TEST_F(InterpReduce, SumOverEachAxis) {
  EXPECT_EQ(run(reduce_sum(x)).to_floats(), (Floats{21}));
  EXPECT_EQ(run(reduce_sum(x)).shape(), (Shape{}));
  EXPECT_EQ(run(reduce_sum(x, {0})).to_floats(), (Floats{5, 7, 9}));
  EXPECT_EQ(run(reduce_sum(x, {1})).to_floats(), (Floats{9, 12}));
}

TEST_F(InterpReduce, KeepdimsAndNegativeAxes) {
  const Array r = run(reduce_sum(x, {-1}, true));
  EXPECT_EQ(r.shape(), (Shape{2, 1}));
  EXPECT_EQ(r.to_floats(), (Floats{9, 12}));
  const Array m = run(reduce_max(x, {-2}, true));
  EXPECT_EQ(m.shape(), (Shape{1, 3}));
  EXPECT_EQ(m.to_floats(), (Floats{4, 5, 6}));
  const Array all = run(reduce_mean(x, {0, -1}, true));
  EXPECT_EQ(all.shape(), (Shape{1, 1}));
  EXPECT_EQ(all.to_floats(), (Floats{3.5f}));
}

TEST_F(InterpReduce, MeanAndMax) {
  EXPECT_EQ(run(reduce_mean(x, {1})).to_floats(), (Floats{3, 4}));
  EXPECT_EQ(run(reduce_max(x, {1})).to_floats(), (Floats{5, 6}));
  EXPECT_EQ(run(reduce_max(x)).to_floats(), (Floats{6}));
}

TEST(InterpReduce3D, NonAdjacentAxes) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {2, 3, 2});
  Floats v(12);
  for (int i = 0; i < 12; ++i) v[i] = float(i);
  const Array r = eval(g, reduce_sum(x, {0, 2}).id(), {{"x", f32({2, 3, 2}, v)}});
  // x[a,b,c] = 6a + 2b + c; sum over a, c: (0+1+6+7) + 8b
  EXPECT_EQ(r.to_floats(), (Floats{14, 22, 30}));
}

TEST(InterpReduceMaxNaN, NaNPropagates) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {3});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(eval(g, reduce_max(x).id(), {{"x", f32({3}, {1, nan, 2})}}).item()));
}

TEST(InterpArgmax, FirstMaximumWinsTies) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {2, 3});
  const Feeds feeds{{"x", f32({2, 3}, {1, 3, 3, 5, 5, 1})}};
  const Array r = eval(g, argmax(x).id(), feeds);
  EXPECT_EQ(r.dtype(), DType::i64);
  EXPECT_EQ(r.to_ints(), (Ints{1, 0}));
  EXPECT_EQ(eval(g, argmax(x, 0).id(), feeds).to_ints(), (Ints{1, 1, 0}));
  EXPECT_EQ(eval(g, argmax(x, -2).id(), feeds).to_ints(), (Ints{1, 1, 0}));
}

TEST(InterpArgmax, MiddleAxisOf3D) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {2, 3, 2});
  // x[a,b,c]: the maximum over b is at b = (a + c) % 3
  Floats v(12, 0);
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 2; ++c) v[(a * 3 + (a + c) % 3) * 2 + c] = 1;
  EXPECT_EQ(eval(g, argmax(x, 1).id(), {{"x", f32({2, 3, 2}, v)}}).to_ints(), (Ints{0, 1, 1, 2}));
}

TEST(InterpOneHot, OutOfRangeIndicesGiveZeroRows) {
  Graph g;
  Tensor i = placeholder(g, "i", DType::i64, {4});
  const Array r = eval(g, one_hot(i, 3).id(), {{"i", testkit::ints(DType::i64, {4}, {0, 2, -1, 3})}});
  EXPECT_EQ(r.shape(), (Shape{4, 3}));
  EXPECT_EQ(r.dtype(), DType::f32);
  EXPECT_EQ(r.to_floats(), (Floats{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
}

TEST(InterpOneHot, Int32IndicesAndOtherDtypes) {
  Graph g;
  Tensor i = placeholder(g, "i", DType::i32, {2, 1});
  const Array r = eval(g, one_hot(i, 2, DType::i32).id(), {{"i", testkit::ints(DType::i32, {2, 1}, {1, 0})}});
  EXPECT_EQ(r.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(r.dtype(), DType::i32);
  EXPECT_EQ(r.to_ints(), (Ints{0, 1, 1, 0}));
}

}  // namespace
}  // namespace kiln
