// What the Estimator checks of every batch before it feeds it: class ids and token ids
// inside the model's range (an id of 100 for 10 classes would train with a loss of 0),
// and at least one example.
#include <gtest/gtest.h>

#include "kiln/estimator.h"
#include "kiln/hooks.h"
#include "kiln/models.h"
#include "support/run_kiln.h"
#include "support/train_inputs.h"

namespace kiln {
namespace {

using testkit::contains;

std::shared_ptr<const data::Dataset> with_label(int64_t at, int value) {
  auto ds = testkit::blobs(64, 3);
  data::Dataset copy = *ds;
  copy.labels.set(at, value);
  return std::make_shared<const data::Dataset>(std::move(copy));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no DataError)";
}

class LabelsOutOfRange : public ::testing::TestWithParam<const char*> {};

TEST_P(LabelsOutOfRange, AreADataErrorNamingTheBatchTheExampleAndTheValue) {
  EstimatorOptions o;
  o.backend = parse_backend(GetParam());
  Estimator est(classifier_model_fn(mlp_model({16}, 2, 7)), RunConfig{}, Params{{"optimizer", "sgd"}, {"learning_rate", 0.1}}, o);
  // Batches of 16 in order: example 37 is in batch 2 (global step 2), example 5 of it.
  const std::string train = error_of([&] { est.train(testkit::eval_input(with_label(37, 100), 16), 4); });
  EXPECT_TRUE(contains(train, "[labels] the batch of global step 2, example 5: index 100 is outside 0..1, the logits' 2 "
                              "classes (sparse_softmax_cross_entropy)"))
      << train;
  EXPECT_EQ(est.global_step(), 2) << "the steps before the bad batch ran; the bad one did not";
  const std::string eval = error_of([&] { est.evaluate(testkit::eval_input(with_label(0, -1), 16)); });
  EXPECT_TRUE(contains(eval, "[labels] batch 0 of the evaluation input, example 0: index -1 is outside 0..1")) << eval;
}

INSTANTIATE_TEST_SUITE_P(Backends, LabelsOutOfRange, ::testing::Values("interp", "cpu"));

TEST(EmptyBatches, AreADataErrorNotANanLoss) {
  Estimator est(classifier_model_fn(mlp_model({16}, 2, 7)), RunConfig{}, Params{{"optimizer", "sgd"}, {"learning_rate", 0.1}},
                testkit::interp());
  struct Empty : data::BatchSource {
    bool next(data::Batch& b) override {
      b.features = Array(DType::f32, {0, 8});
      b.labels = Array(DType::i32, {0});
      return true;
    }
  };
  const std::string e = error_of([&] { est.train([] { return std::make_unique<Empty>(); }, 3); });
  EXPECT_TRUE(contains(e, "[input_fn] the batch of global step 0 holds no examples (features [0,8])")) << e;
}

}  // namespace
}  // namespace kiln
