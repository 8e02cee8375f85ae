// grad() semantics that finite differences cannot show: ties, kinks, zero gradients,
// dtypes of gradients, and errors.
#include "kiln/autodiff/grad.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kiln/base/error.h"
#include "support/test_arrays.h"

namespace kiln {
namespace {

using testkit::f32;

// Runs g with the given feeds and returns output `name` as floats.
std::vector<float> fetch(Graph& g, const Tensor& t, const Feeds& feeds) {
  return testkit::eval(g, t.id(), feeds).to_floats();
}

TEST(Grad, ReduceMaxSharesTheGradientAmongTies) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {4});
  Tensor loss = reduce_max(x);
  Tensor gx = grad(loss, {x})[0];
  EXPECT_EQ(fetch(g, gx, {{"x", f32({4}, {1, 3, 3, 2})}}), (std::vector<float>{0, 0.5f, 0.5f, 0}));
}

TEST(Grad, MaxPoolSendsTheGradientToTheFirstMaximum) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {1, 1, 2, 2});
  Tensor gx = grad(reduce_sum(max_pool2d(x, {2, 2}, {2, 2})), {x})[0];
  EXPECT_EQ(fetch(g, gx, {{"x", f32({1, 1, 2, 2}, {1, 4, 4, 4})}}), (std::vector<float>{0, 1, 0, 0}));
}

TEST(Grad, ReluAtZeroHasZeroGradient) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {3});
  Tensor gx = grad(reduce_sum(relu(x)), {x})[0];
  EXPECT_EQ(fetch(g, gx, {{"x", f32({3}, {-1, 0, 2})}}), (std::vector<float>{0, 0, 1}));
}

TEST(Grad, ReusedValueAccumulatesItsCotangents) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {2});
  Tensor gx = grad(reduce_sum(concat({x, exp(x), x}, 0)), {x})[0];
  const auto v = fetch(g, gx, {{"x", f32({2}, {0, 1})}});
  EXPECT_FLOAT_EQ(v[0], 3.0f);
  EXPECT_FLOAT_EQ(v[1], 2.0f + std::exp(1.0f));
}

// A value read in slices (a split, a kernel in row blocks, an RNN's time steps): its
// gradient is the slices' cotangents put together, not a sum of zero-padded full copies.
TEST(Grad, SlicesOfAValueGiveOneConcatNotASumOfPads) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {4, 3});
  Tensor loss = constant(g, 0.0);
  const std::vector<std::pair<int64_t, int64_t>> rows = {{2, 3}, {0, 2}, {3, 4}, {0, 2}};  // rows 0-1 twice
  for (size_t i = 0; i < rows.size(); ++i)
    loss = loss + reduce_sum(slice(x, {rows[i].first, 0}, {rows[i].second, 3}) * static_cast<double>(i + 1));
  Tensor gx = grad(loss, {x})[0];
  EXPECT_EQ(g.node(gx.id()).op, Op::concat) << describe_node(g, gx.id());
  EXPECT_EQ(fetch(g, gx, {{"x", f32({4, 3}, std::vector<float>(12, 1.0f))}}),
            (std::vector<float>{6, 6, 6, 6, 6, 6, 1, 1, 1, 3, 3, 3}));
  // Slices that leave a gap are padded, once per region.
  Graph h;
  Tensor y = placeholder(h, "y", DType::f32, {4});
  Tensor l2 = reduce_sum(slice(y, {0}, {1})) + reduce_sum(slice(y, {0}, {1}) * 2.0) + reduce_sum(slice(y, {3}, {4}));
  Tensor gy = grad(l2, {y})[0];
  EXPECT_EQ(fetch(h, gy, {{"y", f32({4}, {1, 1, 1, 1})}}), (std::vector<float>{3, 0, 0, 1}));
}

TEST(Grad, UnusedAndNonDifferentiablePathsGiveZeros) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {2, 3});
  Tensor unused = placeholder(g, "unused", DType::f32, {4});
  // Only through argmax/one_hot, which have no gradient.
  Tensor loss = reduce_sum(one_hot(argmax(x, 1), 3));
  auto gs = grad(loss, {x, unused});
  EXPECT_EQ(gs[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(gs[1].shape(), (Shape{4}));
  const Feeds feeds{{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"unused", f32({4}, {1, 2, 3, 4})}};
  EXPECT_EQ(fetch(g, gs[0], feeds), std::vector<float>(6, 0.0f));
  EXPECT_EQ(fetch(g, gs[1], feeds), std::vector<float>(4, 0.0f));
}

TEST(Grad, CastGradientHasTheInputDtype) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {3});
  Tensor xb = placeholder(g, "xb", DType::bf16, {3});
  Tensor gx = grad(reduce_sum(cast(cast(x, DType::bf16), DType::f32)), {x})[0];
  Tensor gb = grad(cast(reduce_sum(xb), DType::f32), {xb})[0];
  EXPECT_EQ(gx.dtype(), DType::f32);
  EXPECT_EQ(gb.dtype(), DType::bf16);
  const Feeds feeds{{"x", f32({3}, {0.1f, 1.3f, -7})}, {"xb", Array::from_floats(DType::bf16, {3}, std::vector<float>{1, 2, 3})}};
  EXPECT_EQ(fetch(g, gx, feeds), std::vector<float>(3, 1.0f));
  EXPECT_EQ(fetch(g, gb, feeds), std::vector<float>(3, 1.0f));
}

TEST(Grad, LossMustBeAFloatScalar) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {3});
  try {
    grad(exp(x), {x});
    FAIL() << "expected GraphError";
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("[grad]"), std::string::npos) << e.what();
  }
  Tensor i = placeholder(g, "i", DType::i32, {});
  EXPECT_THROW(grad(i, {x}), GraphError);
}

TEST(Grad, PowExponentGradientIsZeroForNonPositiveBase) {
  Graph g;
  Tensor a = placeholder(g, "a", DType::f32, {3});
  Tensor b = placeholder(g, "b", DType::f32, {3});
  Tensor gb = grad(reduce_sum(pow(a, b)), {b})[0];
  const auto v = fetch(g, gb, {{"a", f32({3}, {-2, 0, 2})}, {"b", f32({3}, {2, 2, 2})}});
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[1], 0.0f);
  EXPECT_FLOAT_EQ(v[2], 4 * std::log(2.0f));
}

TEST(Grad, MaximumTieGoesToTheFirstInput) {
  Graph g;
  Tensor a = placeholder(g, "a", DType::f32, {2});
  Tensor b = placeholder(g, "b", DType::f32, {2});
  auto gs = grad(reduce_sum(maximum(a, b)), {a, b});
  const Feeds feeds{{"a", f32({2}, {1, 2})}, {"b", f32({2}, {1, 3})}};
  EXPECT_EQ(fetch(g, gs[0], feeds), (std::vector<float>{1, 0}));
  EXPECT_EQ(fetch(g, gs[1], feeds), (std::vector<float>{0, 1}));
}

TEST(Grad, BroadcastAddGradientDoesNotDependOnGraphCapacity) {
  // Regression: sum_to once kept its target shape as a reference into the graph's node
  // vector, which dangled when the reduce_sum it appends reallocated that vector. Padding
  // the graph with 0..16 dead nodes moves the reallocation onto that append for some
  // padding; a correct sum_to passes for all of them.
  for (int padding = 0; padding <= 16; ++padding) {
    Graph g;
    for (int k = 0; k < padding; ++k) constant(g, k);
    Tensor a = placeholder(g, "a", DType::f32, {3, 4});
    Tensor b = placeholder(g, "b", DType::f32, {4});
    Tensor gb = grad(reduce_sum(a + b), {b})[0];
    ASSERT_EQ(gb.shape(), (Shape{4})) << "padding " << padding;
    const Feeds feeds{{"a", Array(DType::f32, {3, 4})}, {"b", Array(DType::f32, {4})}};
    EXPECT_EQ(fetch(g, gb, feeds), std::vector<float>(4, 3.0f)) << "padding " << padding;
  }
}

}  // namespace
}  // namespace kiln
