// The one definition of convolution and pooling geometry (src/ir/conv_geometry.h): every
// family reads the same numbers from its node, forward or backward.
#include <gtest/gtest.h>

#include "ir/conv_geometry.h"
#include "kiln/autodiff/grad.h"
#include "kiln/ir/ops.h"

namespace kiln {
namespace {

using Ints = std::vector<int64_t>;

TEST(ConvGeometry, WindowPositionsFloor) {
  EXPECT_EQ(window_positions(28, 3, 1, 1), 28);  // "same"
  EXPECT_EQ(window_positions(5, 2, 2, 0), 2);    // the last row is in no window
  EXPECT_EQ(window_positions(7, 3, 2, 1), 4);
}

TEST(ConvGeometry, AConvolutionAndItsGradientsShareOneGeometry) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {2, 3, 9, 8});
  const Tensor w = placeholder(g, "w", DType::f32, {5, 3, 3, 2});
  const Tensor y = conv2d(x, w, {2, 1}, {1, 0});
  const ConvGeometry want{2, 3, 9, 8, 5, 3, 2, 5, 7, 2, 1, 1, 0};
  EXPECT_EQ(conv_geometry(g, g.node(y.id())), want);
  EXPECT_EQ(want.far_ph(), 1);  // (5 - 1) * 2 + 3 - 9 - 1: one row of padding below too
  EXPECT_EQ(want.far_pw(), 0);
  const Attrs common{{"stride", Ints{2, 1}}, {"padding", Ints{1, 0}}};
  Attrs bi = common, bf = common;
  bi.set("input_shape", Ints{2, 3, 9, 8});
  bf.set("filter_shape", Ints{5, 3, 3, 2});
  const ValueId dx = g.add(Op::conv2d_backward_input, {y.id(), w.id()}, bi);
  const ValueId dw = g.add(Op::conv2d_backward_filter, {x.id(), y.id()}, bf);
  EXPECT_EQ(conv_geometry(g, g.node(dx)), want);
  EXPECT_EQ(conv_geometry(g, g.node(dw)), want);
}

TEST(ConvGeometry, AGroupedConvolutionsGradientsKeepItsGroups) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {2, 4, 6, 6});
  const Tensor w = placeholder(g, "w", DType::f32, {8, 1, 3, 3});  // depthwise, multiplier 2
  const Tensor y = conv2d(x, w, {2, 2}, {1, 1}, 4);
  const ConvGeometry want{2, 4, 6, 6, 8, 3, 3, 3, 3, 2, 2, 1, 1, 4};
  EXPECT_EQ(conv_geometry(g, g.node(y.id())), want);
  EXPECT_EQ(want.filter_size(), 8 * 1 * 3 * 3);
  const std::vector<Tensor> grads = grad(reduce_sum(y * y), {x, w});
  int seen = 0;
  for (const Node& n : g.nodes()) {
    if (n.op != Op::conv2d_backward_input && n.op != Op::conv2d_backward_filter) continue;
    EXPECT_EQ(conv_geometry(g, n), want) << op_name(n.op);
    ++seen;
  }
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(grads[1].shape(), (Shape{8, 1, 3, 3}));
}

TEST(ConvGeometry, PoolingKeepsItsChannelsAndItsGradientsAgree) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {1, 2, 5, 5});
  const Tensor y = max_pool2d(x, {2, 2}, {2, 2}, {0, 0});
  const ConvGeometry want{1, 2, 5, 5, 2, 2, 2, 2, 2, 2, 2, 0, 0};
  EXPECT_EQ(conv_geometry(g, g.node(y.id())), want);
  EXPECT_EQ(want.far_ph(), -1) << "the floor leaves the last row unread";
  const Attrs window{{"window", Ints{2, 2}}, {"stride", Ints{2, 2}}, {"padding", Ints{0, 0}}};
  const ValueId max_grad = g.add(Op::max_pool2d_grad, {x.id(), y.id()}, window);
  Attrs avg = window;
  avg.set("input_shape", Ints{1, 2, 5, 5});
  const ValueId avg_grad = g.add(Op::avg_pool2d_grad, {y.id()}, avg);
  EXPECT_EQ(conv_geometry(g, g.node(max_grad)), want);
  EXPECT_EQ(conv_geometry(g, g.node(avg_grad)), want);
}

}  // namespace
}  // namespace kiln
