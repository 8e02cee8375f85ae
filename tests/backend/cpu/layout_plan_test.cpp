// Activation layouts (layout_plan.cpp) and bias gradients joined to their convolutions
// (bias_gradient.cpp) in the CPU schedule of lowered graphs, as compile_cpu schedules
// them. The numbers these schedules compute are held to the interpreter by the
// compiled-vs-interpreter cases conv_pool_conv_blocked_ties and
// conv_relu_pool_flatten_blocked (op_cases.h) and by CompiledCnn.
#include <gtest/gtest.h>

#include "backend/cpu/schedule/bias_gradient.h"
#include "backend/cpu/schedule/schedule.h"
#include "backend/onednn/onednn.h"
#include "kiln/autodiff/grad.h"
#include "kiln/backend/compiler.h"
#include "kiln/ir/ops.h"
#include "passes/passes.h"

namespace kiln::cpu {
namespace {

// conv(3 -> 16) + bias, ReLU, 2x2 max pool, conv(16 -> 16); the loss's gradients with
// respect to both filters and the bias. `conv_out_is_output`: the first convolution's
// activation is also a graph output.
Graph conv_pool_conv(bool conv_out_is_output) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {4, 3, 8, 8});
  const Tensor w1 = placeholder(g, "w1", DType::f32, {16, 3, 3, 3});
  const Tensor b1 = placeholder(g, "b1", DType::f32, {16});
  const Tensor w2 = placeholder(g, "w2", DType::f32, {16, 16, 3, 3});
  const Tensor h = relu(conv2d(x, w1, {1, 1}, {1, 1}) + reshape(b1, {16, 1, 1}));
  const Tensor y = conv2d(max_pool2d(h, {2, 2}, {2, 2}), w2, {1, 1}, {1, 1});
  const Tensor loss = reduce_sum(y * y);
  const std::vector<Tensor> d = grad(loss, {w1, b1, w2});
  g.add_output("loss", loss.id());
  g.add_output("dw1", d[0].id());
  g.add_output("db1", d[1].id());
  g.add_output("dw2", d[2].id());
  if (conv_out_is_output) g.add_output("h", h.id());
  return g;
}

// The channel block oneDNN runs the first convolution's output in; 0 means plain.
int first_conv_block() {
  const ConvGeometry geom{4, 3, 8, 8, 16, 3, 3, 8, 8, 1, 1, 1, 1};
  return onednn::preferred_layouts(onednn::ConvPass::forward, false, geom).y;
}

// The block of the (only) value computed by op `op` in the schedule.
int block_of_op(const Schedule& s, Op op) {
  int found = 0, block = -1;
  for (size_t i = 0; i < s.graph.size(); ++i)
    if (s.graph.node(static_cast<ValueId>(i)).op == op) {
      ++found;
      block = s.block(static_cast<ValueId>(i));
    }
  EXPECT_EQ(found, 1) << op_name(op);
  return block;
}

TEST(LayoutPlan, ActivationsStayInOneDnnsBlockedLayoutBetweenConvolutionsAndPools) {
  const int b = first_conv_block();
  if (b == 0) GTEST_SKIP() << "oneDNN runs these convolutions on plain activations on this CPU";
  const Schedule s = make_schedule(passes::lower(conv_pool_conv(false), {}));
  EXPECT_EQ(block_of_op(s, Op::conv2d_bias), b);  // ReLU folded in: the pool's x
  EXPECT_EQ(block_of_op(s, Op::max_pool2d), b);   // the second convolution's x
  EXPECT_EQ(block_of_op(s, Op::conv2d_backward_input), b);  // the pool gradient's dy
  EXPECT_EQ(block_of_op(s, Op::max_pool2d_grad), b);        // dy of the first filter gradient
  EXPECT_EQ(block_of_op(s, Op::conv2d), 0) << "the second convolution's y is read by the loss's loop";
}

TEST(LayoutPlan, AnActivationAPlainStepReadsIsPlainAndSoIsItsPoolingChain) {
  const Schedule s = make_schedule(passes::lower(conv_pool_conv(true), {}));
  EXPECT_EQ(block_of_op(s, Op::conv2d_bias), 0) << "a graph output is read outside the step";
  // The pool reads a plain x, so its output and its gradient's dx are plain too.
  EXPECT_EQ(block_of_op(s, Op::max_pool2d), 0);
  EXPECT_EQ(block_of_op(s, Op::max_pool2d_grad), 0);
  EXPECT_EQ(block_of_op(s, Op::conv2d_backward_input), 0);
}

// Convolutions back to back with a residual add: the ReLU's gradient (an elementwise
// select) and the add read blocked activations at the index they write, so they stay
// blocked, and nothing is reordered between the convolutions.
TEST(LayoutPlan, ElementwiseStepsBetweenConvolutionsKeepTheBlockedLayout) {
  const int b = first_conv_block();
  if (b == 0) GTEST_SKIP() << "oneDNN runs these convolutions on plain activations on this CPU";
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {4, 3, 8, 8});
  const Tensor w1 = placeholder(g, "w1", DType::f32, {16, 3, 3, 3});
  const Tensor w2 = placeholder(g, "w2", DType::f32, {16, 16, 3, 3});
  const Tensor h = relu(conv2d(x, w1, {1, 1}, {1, 1}));
  const Tensor r = h + relu(conv2d(h, w2, {1, 1}, {1, 1}));
  const Tensor y = conv2d(r, w2, {1, 1}, {1, 1});
  const Tensor loss = reduce_sum(y * y);
  const std::vector<Tensor> d = grad(loss, {w1, w2});
  g.add_output("loss", loss.id());
  g.add_output("dw1", d[0].id());
  g.add_output("dw2", d[1].id());
  const Schedule s = make_schedule(passes::lower(g, {}));
  int blocked_loops = 0;
  for (const Step& st : s.steps)
    if (st.kind == StepKind::elementwise && s.block(st.node()) == b) ++blocked_loops;
  EXPECT_GE(blocked_loops, 3) << "the residual add and the ReLU gradients";
  Feeds feeds;
  for (const char* name : {"x", "w1", "w2"}) {
    const Node& n = g.node(*g.find(name));
    feeds[name] = Array(DType::f32, n.shape);
    for (int64_t i = 0; i < feeds[name].numel(); ++i) feeds[name].set(i, double((i * 7) % 11) / 11.0 - 0.5);
  }
  CompileReport report;
  auto exe = compile_cpu(g, {}, &report);
  const int64_t before = onednn::blocked_activation_reorders();
  Variables vars;
  exe->run(feeds, vars);
  // Only the last convolution's: the loss's reduction reads its y plain, so it writes y
  // plain and its two backward passes read a plain dy. None between the convolutions.
  EXPECT_EQ(onednn::blocked_activation_reorders() - before, 3);
}

TEST(BiasGradient, TheFilterGradientConvolutionComputesItAndNoReductionIsLeft) {
  const Schedule s = make_schedule(passes::lower(conv_pool_conv(false), {}));
  int joined = 0;
  for (const Step& st : s.steps) {
    if (st.kind == StepKind::reduce)
      EXPECT_NE(s.graph.node(st.node()).attrs.ints("axes"), (std::vector<int64_t>{0, 2, 3}))
          << "a per-channel sum is left";
    const ValueId db = bias_gradient_of(s, st);
    if (db < 0) continue;
    ++joined;
    EXPECT_EQ(s.graph.node(db).op, Op::reduce_sum);
    EXPECT_EQ(numel(s.graph.node(db).shape), 16);
  }
  EXPECT_EQ(joined, 1);
}

}  // namespace
}  // namespace kiln::cpu
