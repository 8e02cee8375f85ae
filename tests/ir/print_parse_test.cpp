// The text form: parse(print(g)) reproduces g node by node and prints identically.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/autodiff/grad.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/text.h"

namespace kiln {
namespace {

void expect_same_graph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const Node& x = a.nodes()[i];
    const Node& y = b.nodes()[i];
    EXPECT_EQ(x.op, y.op) << "node %" << i;
    EXPECT_EQ(x.inputs, y.inputs) << "node %" << i;
    EXPECT_TRUE(x.attrs == y.attrs) << "node %" << i;
    EXPECT_EQ(x.dtype, y.dtype) << "node %" << i;
    EXPECT_EQ(x.shape, y.shape) << "node %" << i;
    EXPECT_EQ(x.name, y.name) << "node %" << i;
  }
  EXPECT_EQ(a.outputs(), b.outputs());
  for (const Node& n : a.nodes())
    if (!n.name.empty()) {
      EXPECT_EQ(b.find(n.name), a.find(n.name)) << n.name;
    }
}

void expect_round_trip(const Graph& g) {
  const std::string text = print_graph(g);
  const Graph back = parse_graph(text);
  EXPECT_EQ(print_graph(back), text);
  expect_same_graph(g, back);
  // The canonical form is itself parseable and canonical.
  const std::string canon = print_graph(g, TextForm::canonical);
  EXPECT_EQ(print_graph(parse_graph(canon), TextForm::canonical), canon);
  EXPECT_EQ(print_graph(back, TextForm::canonical), canon);
}

// An MLP training step: forward, gradients, SGD updates and the step counter.
Graph mlp_training_graph() {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {8, 4});
  Tensor w1 = variable(g, "w1", DType::f32, {4, 16}, Init::glorot_uniform(1));
  Tensor w2 = variable(g, "w2", DType::f32, {16, 3}, Init::normal(0, 0.05, 2));
  Tensor h = relu(matmul(x, w1)).named("hidden");
  Tensor logits = matmul(h, w2).named("logits");
  Tensor loss = reduce_mean(sigmoid(logits)).named("loss");
  const auto grads = grad(loss, {w1, w2});
  assign(w1, w1 - grads[0] * 0.1);
  assign(w2, w2 - grads[1] * 0.1);
  increment_global_step(g);
  g.add_output("loss", loss.id());
  g.add_output("predictions", argmax(logits).id());
  return g;
}

TEST(PrintParse, MlpWithGradientsRoundTrips) { expect_round_trip(mlp_training_graph()); }

TEST(PrintParse, EveryAttributeKindRoundTrips) {
  Graph g;
  Tensor img = placeholder(g, "img", DType::f32, {2, 3, 8, 8});
  Tensor w = variable(g, "w", DType::f32, {4, 3, 3, 3}, Init::uniform(-0.1, 0.25, 9));
  Tensor labels = placeholder(g, "labels", DType::i32, {2});
  Tensor c = conv2d(img, w, {2, 1}, {1, 0});
  Tensor p = avg_pool2d(max_pool2d(c, {2, 2}, {1, 1}), {2, 2}, {2, 2}, {1, 1});
  Tensor flat = reshape(p, {2, -1});
  Tensor s = concat({slice(flat, {0, 1}, {2, 5}), pad(flat, {0, 0}, {0, 2})}, 1);
  Tensor hb = cast(s, DType::bf16);
  Tensor big = constant(g, 1e-30, DType::f32, {2, 1});
  Tensor inf = constant(g, -std::numeric_limits<double>::infinity());
  Tensor t = maximum(cast(hb, DType::f32) + big, inf) - constant(g, 0.1);
  Tensor onehot = one_hot(labels, 7, DType::f32);
  g.add_output("t", t.id());
  g.add_output("oh", transpose(onehot, {1, 0}).id());
  g.add_output("we\"ird\\name", reduce_max(t, {-1}, true).id());
  expect_round_trip(g);
}

TEST(PrintParse, PrintsTheDocumentedFormat) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {256, 784});
  Tensor w = variable(g, "w", DType::f32, {784, 10}, Init::glorot_uniform(1));
  g.add_output("logits", matmul(x, w).id());
  EXPECT_EQ(print_graph(g),
            "kiln-graph v1\n"
            "%0 = placeholder() {dtype=\"f32\", shape=[256,784]} : f32[256,784] \"x\"\n"
            "%1 = variable() {dtype=\"f32\", init=\"glorot_uniform\", seed=1, shape=[784,10]} : f32[784,10] \"w\"\n"
            "%2 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[256,10]\n"
            "output \"logits\" = %2\n");
}

TEST(PrintParse, DoublesKeepEveryBit) {
  for (double v : {0.1, -2.5e-300, 1.0 / 3.0, 3.0, 1e22, 5e-324}) {
    Graph g;
    g.add_output("c", constant(g, v).id());
    const Graph back = parse_graph(print_graph(g));
    EXPECT_EQ(back.node(0).attrs.f("value"), v);
    EXPECT_TRUE(std::holds_alternative<double>(back.node(0).attrs.items().at("value")));
  }
}

TEST(PrintParse, CommentsAndBlankLinesAreIgnored) {
  const Graph g = parse_graph(
      "# a comment\n\nkiln-graph v1\n%0 = placeholder() {dtype=\"f32\", shape=[]} : f32[] \"x\"\n\n"
      "# another\noutput \"x\" = %0\n");
  EXPECT_EQ(g.size(), 1u);
  EXPECT_EQ(g.outputs().size(), 1u);
}

}  // namespace
}  // namespace kiln
