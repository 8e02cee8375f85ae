// Hooks fetch values by the names model_fn gave them, as in TensorFlow: "loss" is the value
// named "loss", not the EstimatorSpec's loss when model_fn named another value so.
#include <gtest/gtest.h>

#include "kiln/estimator.h"
#include "kiln/models.h"
#include "kiln/optimizer.h"
#include "support/train_inputs.h"

namespace kiln {
namespace {

// total_loss = loss + 0.5 (a weight-decay stand-in); model_fn names the first "loss".
EstimatorSpec with_total_loss(const Tensor& x, const Tensor& y, ModeKeys mode, const Params&) {
  const Tensor logits = mlp_model({16}, 2, 7)(x);
  EstimatorSpec spec;
  spec.predictions["logits"] = logits;
  const Tensor loss = reduce_mean(sparse_softmax_cross_entropy(logits, y)).named("loss");
  spec.loss = loss + constant(x.graph(), 0.5);
  if (mode == ModeKeys::train) spec.train_op = make_sgd(0.1)->minimize(spec.loss);
  return spec;
}

struct Fetches : Hook {
  std::vector<std::string> fetches() const override { return {"loss"}; }
  void after_run(RunContext&, const RunValues& v) override {
    fetched = v.values.at("loss").item();
    spec = v.loss();
  }
  double fetched = 0, spec = 0;
};

TEST(HookFetches, LossIsTheValueModelFnNamedLoss) {
  Estimator est(with_total_loss, RunConfig{}, Params{}, testkit::interp());
  auto hook = std::make_shared<Fetches>();
  const TrainStats st = est.train(testkit::training_input(testkit::blobs(64, 3), 16), 3, {hook});
  EXPECT_NEAR(hook->spec - hook->fetched, 0.5, 1e-6) << "the named loss, not the spec's total";
  EXPECT_DOUBLE_EQ(st.final_loss, hook->spec) << "the Estimator reports the spec's loss";
}

TEST(HookFetches, LossIsTheSpecsLossWhenNothingElseIsNamedLoss) {
  Estimator est(classifier_model_fn(mlp_model({16}, 2, 7)), RunConfig{}, Params{{"optimizer", "sgd"}, {"learning_rate", 0.1}},
                testkit::interp());
  auto hook = std::make_shared<Fetches>();
  est.train(testkit::training_input(testkit::blobs(64, 3), 16), 3, {hook});
  EXPECT_EQ(hook->fetched, hook->spec);
}

}  // namespace
}  // namespace kiln
