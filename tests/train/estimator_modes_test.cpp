// Outside TRAIN mode nothing changes a variable or the step counter, whatever model_fn
// builds: a model_fn that calls minimize() in every mode (as many TensorFlow scripts do,
// since TensorFlow ignores train_op outside TRAIN) evaluates and predicts the same way twice.
#include <gtest/gtest.h>

#include "kiln/train/estimator.h"
#include "kiln/models/models.h"
#include "kiln/train/optimizer.h"
#include "support/train_inputs.h"

namespace kiln {
namespace {

using testkit::blobs;
using testkit::eval_input;
using testkit::training_input;

// minimize() in every mode; in predict mode on a loss of the features alone.
EstimatorSpec minimizes_always(const Tensor& x, const Tensor& y, ModeKeys mode, const Params&) {
  const Network net = mlp_model({16}, 2, 7);
  const Tensor logits = net(x);
  EstimatorSpec spec;
  spec.predictions["logits"] = logits;
  const Tensor loss = mode == ModeKeys::predict ? reduce_mean(square(logits))
                                                : reduce_mean(sparse_softmax_cross_entropy(logits, y));
  spec.loss = loss;
  spec.eval_metrics["accuracy"] = accuracy_metric(y.valid() ? y : cast(argmax(logits, 1), DType::i32),
                                                  cast(argmax(logits, 1), DType::i32));
  spec.train_op = make_momentum(0.5, 0.9)->minimize(loss);
  return spec;
}

std::map<std::string, std::vector<double>> values_of(const Variables& vars) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& [name, a] : vars)
    for (int64_t i = 0; i < a.numel(); ++i) out[name].push_back(a.get(i));
  return out;
}

class OutsideTraining : public ::testing::TestWithParam<const char*> {};

TEST_P(OutsideTraining, EvaluateAndPredictChangeNoVariableAndNoStep) {
  EstimatorOptions o;
  o.backend = parse_backend(GetParam());
  Estimator est(minimizes_always, RunConfig{}, Params{}, o);
  const auto ds = blobs(64, 3);
  est.train(training_input(ds, 16), 5);
  ASSERT_EQ(est.global_step(), 5);
  const auto before = values_of(est.variables());

  const Evaluation a = est.evaluate(eval_input(ds, 16));
  const Evaluation b = est.evaluate(eval_input(ds, 16));
  EXPECT_EQ(a.metrics, b.metrics);
  EXPECT_EQ(a.global_step, 5);
  EXPECT_EQ(b.global_step, 5);
  EXPECT_EQ(est.global_step(), 5);
  EXPECT_EQ(values_of(est.variables()), before);

  const auto p = est.predict(eval_input(ds, 16));
  const auto q = est.predict(eval_input(ds, 16));
  ASSERT_EQ(p.at("logits").numel(), q.at("logits").numel());
  for (int64_t i = 0; i < p.at("logits").numel(); ++i) ASSERT_EQ(p.at("logits").get(i), q.at("logits").get(i));
  EXPECT_EQ(est.global_step(), 5);
  EXPECT_EQ(values_of(est.variables()), before);

  // Training goes on from step 5, not from a step the evaluations advanced.
  EXPECT_EQ(est.train(training_input(ds, 16), 10).steps, 5);
}

INSTANTIATE_TEST_SUITE_P(Backends, OutsideTraining, ::testing::Values("interp", "cpu"));

}  // namespace
}  // namespace kiln
