// The transpose pass: transposes moved below elementwise ops and reductions until
// inverse pairs cancel, values unchanged.
#include <gtest/gtest.h>

#include "kiln/autodiff/grad.h"
#include "kiln/ir/ops.h"
#include "kiln/backend/runtime.h"
#include "passes/passes.h"
#include "support/backend_compare.h"
#include "support/ir_facts.h"
#include "support/test_arrays.h"

namespace kiln::passes {
namespace {

using testkit::count_op;
using testkit::ir;
using testkit::text;

// TensorFlow's NHWC convolution as kiln's Python front end writes it: NCHW conv2d between
// transposes, the bias and ReLU in NHWC, back to NCHW for the pooling.
const char* kNhwcConv = R"(%0 = placeholder() {dtype="f32", shape=[2,6,6,3]} : f32[2,6,6,3] "x"
%1 = transpose(%0) {perm=[0,3,1,2]} : f32[2,3,6,6]
%2 = variable() {dtype="f32", init="zeros", shape=[4,3,3,3]} : f32[4,3,3,3] "w"
%3 = conv2d(%1, %2) {padding=[1,1], stride=[1,1]} : f32[2,4,6,6]
%4 = transpose(%3) {perm=[0,2,3,1]} : f32[2,6,6,4]
%5 = variable() {dtype="f32", init="zeros", shape=[4]} : f32[4] "b"
%6 = add(%4, %5) : f32[2,6,6,4]
%7 = relu(%6) : f32[2,6,6,4]
%8 = transpose(%7) {perm=[0,3,1,2]} : f32[2,4,6,6]
%9 = max_pool2d(%8) {padding=[0,0], stride=[2,2], window=[2,2]} : f32[2,4,3,3]
%10 = transpose(%9) {perm=[0,2,3,1]} : f32[2,3,3,4]
%11 = constant() {dtype="f32", shape=[], value=0.0} : f32[]
%12 = greater(%7, %11) : bool[2,6,6,4]
%13 = reduce_sum(%7) {axes=[0,1,2], keepdims=0} : f32[4]
%14 = reduce_sum(%7) {axes=[1], keepdims=0} : f32[2,6,4]
%15 = select(%12, %7, %11) : f32[2,6,6,4]
%16 = cast(%15) {dtype="bf16"} : bf16[2,6,6,4]
%17 = transpose(%16) {perm=[0,3,1,2]} : bf16[2,4,6,6]
output "pooled" = %10
output "channel_sums" = %13
output "row_sums" = %14
output "masked" = %17
)";

TEST(SinkTransposes, AnNhwcConvolutionComputesInNchwAndFusesItsBiasAndRelu) {
  const Graph before = ir(kNhwcConv);
  const Graph after = sink_transposes(before);
  // Left: the input's transpose (a placeholder) and those of the outputs that were
  // written NHWC (the pooled output, the row sums). Gone: the three around the
  // convolution and the masked output's.
  EXPECT_EQ(count_op(before, Op::transpose), 5);
  EXPECT_EQ(count_op(dce(after), Op::transpose), 3) << text(after);
  const Graph lowered = fuse_epilogues(after);
  EXPECT_EQ(count_op(dce(lowered), Op::conv2d_bias), 1) << text(after);
}

TEST(SinkTransposes, ValuesAreTheInterpretersOnTheGraphAsWritten) {
  Graph before = ir(kNhwcConv);
  testkit::TestRng rng(testkit::seed_of("sink"));
  Variables vars;
  initialize_variables(before, vars);
  vars["w"] = testkit::uniform_array(rng, {4, 3, 3, 3}, -1, 1);
  vars["b"] = testkit::uniform_array(rng, {4}, -0.5, 0.5);
  const Feeds feeds{{"x", testkit::uniform_array(rng, {2, 6, 6, 3}, -1, 1)}};
  Variables v1 = vars, v2 = vars;
  const Fetches want = make_interpreter(before)->run(feeds, v1);
  const Graph after = sink_transposes(before);
  ASSERT_LT(count_op(dce(after), Op::transpose), count_op(before, Op::transpose));
  const Fetches got = make_interpreter(after)->run(feeds, v2);
  for (const auto& [name, value] : want)
    EXPECT_TRUE(testkit::arrays_close(name, value, got.at(name), testkit::tolerance_for(value.dtype())));
}

TEST(SinkTransposes, InversePairsCancelAndANameMovesToTheValueItNamed) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[2,3,4]} : f32[2,3,4] "x"
%1 = transpose(%0) {perm=[2,0,1]} : f32[4,2,3]
%2 = neg(%1) : f32[4,2,3] "negated"
%3 = transpose(%2) {perm=[1,2,0]} : f32[2,3,4]
%4 = exp(%1) : f32[4,2,3]
%5 = transpose(%4) {perm=[1,2,0]} : f32[2,3,4]
output "back" = %3
output "exp_back" = %5
output "negated" = %2
)");
  const Graph after = dce(sink_transposes(before));
  // neg and exp moved below the transpose and met its inverse; the negation is also an
  // output, so it is transposed once for that, and carries its name there.
  EXPECT_EQ(text(after), R"(%0 = placeholder() {dtype="f32", shape=[2,3,4]} : f32[2,3,4] "x"
%1 = neg(%0) : f32[2,3,4]
%2 = transpose(%1) {perm=[2,0,1]} : f32[4,2,3] "negated"
%3 = exp(%0) : f32[2,3,4]
output "back" = %1
output "exp_back" = %3
output "negated" = %2
)");
}

TEST(SinkTransposes, AGraphThatWouldMoveMoreDataStaysAsItWas) {
  // Two outputs of the transposed layout computed from one transpose: sinking would need
  // two transposes where the graph has one.
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[8,16]} : f32[8,16] "x"
%1 = transpose(%0) {perm=[1,0]} : f32[16,8]
%2 = exp(%1) : f32[16,8]
%3 = neg(%1) : f32[16,8]
output "e" = %2
output "n" = %3
)");
  EXPECT_EQ(text(sink_transposes(before)), text(before));
}

TEST(SinkTransposes, ABroadcastAlongTwoAxesIsNotMoved) {
  const Graph before = ir(R"(%0 = placeholder() {dtype="f32", shape=[2,3,4]} : f32[2,3,4] "x"
%1 = placeholder() {dtype="f32", shape=[3,2]} : f32[3,2] "m"
%2 = transpose(%0) {perm=[0,2,1]} : f32[2,4,3]
%3 = transpose(%1) {perm=[1,0]} : f32[2,3]
%4 = reshape(%3) {shape=[2,1,3]} : f32[2,1,3]
%5 = mul(%2, %4) : f32[2,4,3]
%6 = transpose(%5) {perm=[0,2,1]} : f32[2,3,4]
output "y" = %6
)");
  const Graph after = sink_transposes(before);
  EXPECT_EQ(count_op(after, Op::transpose), 3) << text(after);
}

// A training step written as TensorFlow's NHWC layers are: convolution, batch
// normalization over [0,1,2] (keepdims), ReLU, pooling, a dense layer; its gradients.
Graph nhwc_training_step() {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {4, 8, 8, 3});
  const Tensor y = placeholder(g, "y", DType::f32, {4, 5});
  const Tensor k = variable(g, "k", DType::f32, {3, 3, 3, 6}, Init::uniform(-0.5, 0.5, 1));
  const Tensor gamma = variable(g, "gamma", DType::f32, {6}, Init::uniform(0.5, 1.5, 2));
  const Tensor beta = variable(g, "beta", DType::f32, {6}, Init::uniform(-0.5, 0.5, 3));
  const Tensor w = variable(g, "w", DType::f32, {96, 5}, Init::uniform(-0.2, 0.2, 4));
  const Tensor c = transpose(conv2d(transpose(x, {0, 3, 1, 2}), transpose(k, {3, 2, 0, 1}), {1, 1}, {1, 1}), {0, 2, 3, 1});
  const Tensor mean = reduce_mean(c, {0, 1, 2}, true);
  const Tensor centred = sub(c, mean);
  const Tensor var = reduce_mean(square(centred), {0, 1, 2}, true);
  const Tensor bn = add(mul(mul(centred, rsqrt(add(var, scalar_like(var, 1e-3)))), gamma), beta);
  const Tensor pooled = transpose(max_pool2d(transpose(relu(bn), {0, 3, 1, 2}), {2, 2}, {2, 2}), {0, 2, 3, 1});
  const Tensor logits = matmul(reshape(pooled, {4, 96}), w);
  const Tensor loss = reduce_mean(square(sub(logits, y)));
  g.add_output("loss", loss.id());
  const std::vector<Tensor> grads = grad(loss, {k, gamma, beta, w});
  const char* names[] = {"dk", "dgamma", "dbeta", "dw"};
  for (size_t i = 0; i < grads.size(); ++i) g.add_output(names[i], grads[i].id());
  return g;
}

TEST(SinkTransposes, ANhwcTrainingStepComputesInNchwWithTheSameLossAndGradients) {
  const Graph g = nhwc_training_step();
  const Graph after = dce(sink_transposes(g));
  // Left: the input's, the kernel's and its gradient's, the flattening's and its
  // gradient's. Gone: every one around the batch norm, the ReLU and their gradients.
  EXPECT_EQ(count_op(dce(g), Op::transpose), 9);
  EXPECT_EQ(count_op(after, Op::transpose), 5) << text(after);
  testkit::TestRng rng(testkit::seed_of("nhwc step"));
  const Feeds feeds{{"x", testkit::uniform_array(rng, {4, 8, 8, 3}, -1, 1)},
                    {"y", testkit::uniform_array(rng, {4, 5}, -1, 1)}};
  Variables vars;
  initialize_variables(g, vars);
  Variables v1 = vars, v2 = vars;
  // The graph as written on the interpreter, against the compiled step (every pass).
  const Fetches want = make_interpreter(g)->run(feeds, v1);
  const Fetches got = compile_cpu(g, {})->run(feeds, v2);
  for (const auto& [name, value] : want)
    EXPECT_TRUE(testkit::arrays_close(name, value, got.at(name), testkit::tolerance_for(DType::f32).scaled(10)));
}

}  // namespace
}  // namespace kiln::passes
