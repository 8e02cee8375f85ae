// float16 held in float32 (hold_float16_in_float32, where oneDNN has no float16 kernels):
// no product reads or writes float16, biases and ReLUs fold into the float32 products,
// every float16 value left is a rounding (a cast to float16 read only by its cast back) or
// an edge (a source, an assign to a float16 variable, a float16 output), and a training
// step computes the same bits as the float16 graph it replaces (its products folded the
// same way): the interpreter runs both forms, the CNN and the MLP, three steps.
#include <gtest/gtest.h>

#include <cstring>

#include "kiln/models/models.h"
#include "kiln/train/optimizer.h"
#include "kiln/backend/runtime.h"
#include "passes/passes.h"
#include "support/ir_facts.h"
#include "support/test_arrays.h"

namespace kiln::passes {
namespace {

using testkit::users_of;

constexpr int64_t kBatch = 8;

Graph training_step(bool cnn) {
  Graph g;
  const int64_t features = cnn ? 2 * 10 * 11 : 12;
  const Tensor x = placeholder(g, "features", DType::f32, {kBatch, features});
  const Tensor labels = placeholder(g, "labels", DType::i32, {kBatch});
  const Tensor logits = cnn ? cnn_model(CnnShape{2, 10, 11, 16, 32, 24, 10}, 1)(x) : mlp_model({16, 16}, 10, 1)(x);
  const Tensor loss = reduce_mean(sparse_softmax_cross_entropy(logits, labels)).named("loss");
  make_momentum(0.05, 0.9)->minimize(loss);
  g.add_output("loss", loss.id());
  g.add_output("logits", logits.id());
  return g;
}

Feeds batch(int64_t features) {
  testkit::TestRng rng(11);
  Feeds f;
  f["features"] = testkit::uniform_array(rng, {kBatch, features}, 0, 1);
  Array labels(DType::i32, {kBatch});
  for (int64_t i = 0; i < kBatch; ++i) labels.set(i, double(rng.below(10)));
  f["labels"] = labels;
  return f;
}

bool same_bits(const Array& a, const Array& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.bytes(), b.bytes(), a.nbytes()) == 0;
}

bool is_product(OpFamily f) {
  return f == OpFamily::MatMul || f == OpFamily::Dense || f == OpFamily::Conv2D || f == OpFamily::Conv2DBias ||
         f == OpFamily::Conv2DBackwardInput || f == OpFamily::Conv2DBackwardFilter;
}

const LowerOptions kHeld{.policy = PrecisionPolicy::mixed_float16, .float16_in_float32 = true};

TEST(Float16InFloat32, ProductsComputeInFloat32AndEveryFloat16ValueIsARoundingOrAnEdge) {
  for (const bool cnn : {false, true}) {
    const Graph out = lower(training_step(cnn), kHeld);
    int products = 0, roundings = 0, folded = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      const auto id = static_cast<ValueId>(i);
      const Node& n = out.node(id);
      if (is_product(op_info(n.op).family)) {
        ++products;
        folded += n.op == Op::dense || n.op == Op::conv2d_bias;
        EXPECT_EQ(n.dtype, DType::f32) << describe_node(out, id);
        for (ValueId x : n.inputs) EXPECT_EQ(out.node(x).dtype, DType::f32) << describe_node(out, id);
        // Its result is rounded to float16 before anything reads it.
        for (ValueId u : users_of(out, id))
          EXPECT_TRUE(out.node(u).op == Op::cast && out.node(u).dtype == DType::f16) << describe_node(out, u);
      }
      if (n.dtype != DType::f16) continue;
      if (n.inputs.empty()) {  // a float16 constant of the precision pass: read widened
        for (ValueId u : users_of(out, id))
          EXPECT_TRUE(out.node(u).op == Op::cast && out.node(u).dtype == DType::f32) << describe_node(out, u);
        continue;
      }
      ASSERT_EQ(n.op, Op::cast) << "a float16 value that is not a rounding: " << describe_node(out, id);
      ++roundings;
      for (ValueId u : users_of(out, id))
        EXPECT_TRUE(out.node(u).op == Op::cast && out.node(u).dtype == DType::f32) << describe_node(out, u);
    }
    EXPECT_GE(products, cnn ? 8 : 6);
    EXPECT_GE(folded, 2) << "biases (and ReLUs) fold into the float32 products, as in float32";
    EXPECT_GE(roundings, products);
  }
}

// The float16 graph as lower() would run it with float16 products folded, for the
// interpreter: every node in float16, the oracle for the held form.
Graph float16_oracle(const Graph& g) {
  Graph x = cse(simplify(apply_precision(g, PrecisionPolicy::mixed_float16)));
  return dce(fuse_relu_masks(fuse_epilogues(sink_transposes(x), true)));
}

TEST(Float16InFloat32, TrainsToTheSameBitsAsTheFloat16Graph) {
  for (const bool cnn : {false, true}) {
    const Graph g = training_step(cnn);
    auto held = make_interpreter(lower(g, kHeld));
    auto f16 = make_interpreter(float16_oracle(g));
    const Feeds feeds = batch(cnn ? 2 * 10 * 11 : 12);
    Variables a, b;
    initialize_variables(g, a);
    b = a;
    for (int step = 0; step < 3; ++step) {
      const Fetches x = held->run(feeds, a), y = f16->run(feeds, b);
      for (const char* name : {"loss", "logits"})
        EXPECT_TRUE(same_bits(x.at(name), y.at(name))) << name << " at step " << step << (cnn ? " (CNN)" : " (MLP)");
    }
    for (const auto& [name, value] : a) EXPECT_TRUE(same_bits(value, b.at(name))) << name << (cnn ? " (CNN)" : " (MLP)");
  }
}

// A graph that declares float16 itself: a float16 variable updated in float16, a float16
// placeholder, a float16 output. They keep their types; the values are the float16 graph's.
TEST(Float16InFloat32, Float16SourcesAssignsAndOutputsKeepTheirType) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f16, {4, 8});
  const Tensor w = variable(g, "w", DType::f16, {8, 3});
  const Tensor y = matmul(x, w) * 0.37;
  g.add_output("y", y.id());
  assign(w, w - matmul(transpose(x, {1, 0}), y) * 0.01);
  const Graph out = hold_float16_in_float32(g);
  EXPECT_EQ(out.node(out.outputs()[0].value).dtype, DType::f16);
  testkit::TestRng rng(3);
  Array xs(DType::f16, {4, 8}), ws(DType::f16, {8, 3});
  for (int64_t i = 0; i < xs.numel(); ++i) xs.set(i, rng.uniform(-2, 2));
  for (int64_t i = 0; i < ws.numel(); ++i) ws.set(i, rng.uniform(-2, 2));
  Variables a{{"w", ws}}, b{{"w", ws}};
  auto held = make_interpreter(out);
  auto f16 = make_interpreter(g);
  for (int step = 0; step < 2; ++step) {
    const Fetches p = held->run({{"x", xs}}, a), q = f16->run({{"x", xs}}, b);
    EXPECT_TRUE(same_bits(p.at("y"), q.at("y"))) << "step " << step;
  }
  EXPECT_EQ(a.at("w").dtype(), DType::f16);
  EXPECT_TRUE(same_bits(a.at("w"), b.at("w")));
}

}  // namespace
}  // namespace kiln::passes
