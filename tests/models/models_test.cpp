#include "kiln/models/models.h"

#include <gtest/gtest.h>

#include <map>

#include "kiln/base/error.h"
#include "support/ir_facts.h"

namespace kiln {
namespace {

using testkit::variable_shapes;

TEST(Models, CnnHasTheLayersOfTheIssueWithSamePadding) {
  Graph g;
  const Tensor x = placeholder(g, "features", DType::f32, {4, 784});
  const Tensor logits = make_model("cnn", 0)(x);
  EXPECT_EQ(logits.shape(), (Shape{4, 10}));
  const auto v = variable_shapes(g);
  EXPECT_EQ(v.at("conv0/filter"), (Shape{32, 1, 3, 3}));
  EXPECT_EQ(v.at("conv1/filter"), (Shape{64, 32, 3, 3}));
  EXPECT_EQ(v.at("dense0/kernel"), (Shape{64 * 7 * 7, 128}));  // 28 -> 14 -> 7 with "same" convs
  EXPECT_EQ(v.at("logits/kernel"), (Shape{128, 10}));
  EXPECT_EQ(v.size(), 8u);
}

TEST(Models, MlpIs784_1024_1024_10) {
  Graph g;
  make_model("mlp", 0)(placeholder(g, "features", DType::f32, {2, 784}));
  const auto v = variable_shapes(g);
  EXPECT_EQ(v.at("dense0/kernel"), (Shape{784, 1024}));
  EXPECT_EQ(v.at("dense1/kernel"), (Shape{1024, 1024}));
  EXPECT_EQ(v.at("logits/kernel"), (Shape{1024, 10}));
  try {
    make_model("resnet", 0);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("valid: mlp, cnn"), std::string::npos) << e.what();
  }
}

// A tiny CNN (the interpreter's convolution is a textbook loop) learns a trivial task:
// class = whether the bright pixel is in the top or the bottom half.
TEST(Models, TinyCnnTrainsAndEvaluatesThroughTheEstimator) {
  const int64_t n = 32;
  Array x(DType::f32, {n, 36});
  Array y(DType::i32, {n});
  for (int64_t i = 0; i < n; ++i) {
    const int label = static_cast<int>(i % 2);
    x.set(i * 36 + (label ? 24 : 6) + (i / 2) % 6, 1.0);
    y.set(i, label);
  }
  auto ds = std::make_shared<const data::Dataset>(data::Dataset::from_memory(std::move(x), std::move(y)));
  EstimatorOptions o;
  o.backend = Backend::interp;
  Estimator est(classifier_model_fn(cnn_model(CnnShape{1, 6, 6, 4, 4, 8, 2}, 1)), {},
                Params{{"optimizer", "adam"}, {"learning_rate", 0.01}}, o);
  const TrainStats st =
      est.train([ds] { return data::batches(ds, data::BatcherOptions::training(8, 0)); }, 40);
  EXPECT_LT(st.losses.back(), st.losses.front());
  const Evaluation ev = est.evaluate([ds] { return data::batches(ds, data::BatcherOptions::evaluation(16)); });
  EXPECT_GE(ev.at("accuracy"), 0.9);
  const auto p = est.predict([ds] { return data::batches(ds, data::BatcherOptions::evaluation(16)); });
  EXPECT_EQ(p.at("probabilities").shape(), (Shape{n, 2}));
}

}  // namespace
}  // namespace kiln
