// The last, smaller batch of an evaluation or a prediction runs once: its graph goes to the
// interpreter when that costs less than compiling it (interpreter_cost.h), with the same
// results as a compiled graph; a graph the interpreter would be slow on is compiled.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "backend/interpreter_cost.h"
#include "kiln/train/estimator.h"
#include "kiln/models/models.h"
#include "kiln/ir/ops.h"
#include "support/train_inputs.h"

namespace kiln {
namespace {

std::unique_ptr<Estimator> trained_mlp() {
  EstimatorOptions o;
  o.backend = Backend::cpu;
  auto est = std::make_unique<Estimator>(classifier_model_fn(mlp_model({16}, 2, 7)), RunConfig{},
                                         Params{{"optimizer", "sgd"}, {"learning_rate", 0.1}}, o);
  est->train(testkit::training_input(testkit::blobs(256, 3), 16), 5);
  return est;
}

TEST(TailBatches, RunOnTheInterpreterWithTheCompiledResults) {
  const std::unique_ptr<Estimator> trained = trained_mlp();
  Estimator& est = *trained;
  const auto data = testkit::blobs(100, 9);
  const int graphs = est.compile_summary().graphs;
  // Batches of 32, 32, 32 and 4: the 4 is the tail.
  const Evaluation split = est.evaluate(testkit::eval_input(data, 32));
  EXPECT_EQ(est.compile_summary().interpreted, 1);
  EXPECT_EQ(est.compile_summary().graphs, graphs + 1) << "the 32-row graph alone is compiled";
  const Evaluation whole = est.evaluate(testkit::eval_input(data, 100));
  EXPECT_EQ(split.examples, 100);
  for (const auto& [name, value] : whole.metrics)
    if (name != "loss") EXPECT_NEAR(split.at(name), value, 1e-6 * std::max(1.0, std::abs(value))) << name;
  // The loss is the mean of the 4 batches' losses (TensorFlow's): the tail's loss, from
  // it and the 3 full batches' mean, weighs in the mean over the 100 examples as its 4.
  const double full = est.evaluate(testkit::eval_input(data, 32), 3).at("loss");
  const double tail = 4 * split.at("loss") - 3 * full;
  EXPECT_NEAR((96 * full + 4 * tail) / 100, whole.at("loss"), 1e-5);

  const auto parts = est.predict(testkit::eval_input(data, 32));
  EXPECT_EQ(est.compile_summary().interpreted, 2) << "the prediction's tail too";
  const auto all = est.predict(testkit::eval_input(data, 100));
  for (const auto& [name, a] : all) {
    ASSERT_EQ(parts.at(name).shape(), a.shape()) << name;
    for (int64_t i = 0; i < a.numel(); ++i) EXPECT_NEAR(parts.at(name).get(i), a.get(i), 1e-5) << name << "[" << i << "]";
  }
  // A later evaluation whose batches all have the tail's size compiles its own graph.
  est.evaluate(testkit::eval_input(testkit::blobs(8, 4), 4));
  EXPECT_EQ(est.compile_summary().graphs, graphs + 5);  // eval 32, 100; predict 32, 100; eval 4
  EXPECT_EQ(est.compile_summary().interpreted, 2);
}

TEST(InterpreterCost, IsSmallForAnMlpTailAndLargeForImageConvolutions) {
  Graph small;
  const Tensor x = placeholder(small, "x", DType::f32, {4, 784});
  const Tensor w = variable(small, "w", DType::f32, {784, 1024});
  small.add_output("y", relu(matmul(x, w)).id());
  EXPECT_LT(interpreter_seconds(small), 0.01);

  Graph big;
  const Tensor images = placeholder(big, "images", DType::f32, {16, 3, 224, 224});
  const Tensor filter = variable(big, "filter", DType::f32, {64, 3, 11, 11});
  big.add_output("y", conv2d(images, filter, {4, 4}, {2, 2}).id());
  EXPECT_GT(interpreter_seconds(big), 1.0);  // AlexNet's first layer on a tail of 16 images
}

}  // namespace
}  // namespace kiln
