// What the Estimator checks of every batch before it feeds it: class ids and token ids
// inside the model's range (an id of 100 for 10 classes would train with a loss of 0),
// and at least one example; and further features (Batch::more) fed to their own
// placeholders, each with the batch's rows.
#include <gtest/gtest.h>

#include <cstring>

#include "kiln/train/estimator.h"
#include "kiln/train/hooks.h"
#include "kiln/models/models.h"
#include "kiln/train/optimizer.h"
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

// Batches of blobs(64, 3) in order, with a further feature "shift" (f32 [B, 2], added to
// the logits) of `shift_rows` rows (the batch's own when 0).
struct WithShift : data::BatchSource {
  explicit WithShift(int64_t shift_rows) : rows(shift_rows) {}
  bool next(data::Batch& b) override {
    const auto ds = testkit::blobs(64, 3);
    b.features = Array(DType::f32, {16, ds->feature_dim()});
    std::memcpy(b.features.bytes(), ds->features.bytes(), b.features.nbytes());
    b.labels = Array(DType::i32, {16});
    std::memcpy(b.labels.bytes(), ds->labels.bytes(), b.labels.nbytes());
    Array shift(DType::f32, {rows ? rows : 16, 2});
    for (int64_t i = 0; i < shift.numel(); ++i) shift.set(i, i % 2 ? -40.0 : 40.0);  // always class 0
    b.more = {{"shift", std::move(shift)}};
    return true;
  }
  int64_t rows;
};

EstimatorSpec shifted_logits(const Tensor& x, const Tensor& y, ModeKeys mode, const Params&) {
  const Tensor shift(&x.graph(), x.graph().lookup(data::more_feature_name("shift"), "shifted_logits"));
  const Tensor logits = mlp_model({16}, 2, 7)(x) + shift;
  EstimatorSpec spec;
  spec.predictions["logits"] = logits;
  spec.loss = reduce_mean(sparse_softmax_cross_entropy(logits, y));
  if (mode == ModeKeys::train) spec.train_op = make_sgd(0.1)->minimize(spec.loss);
  return spec;
}

TEST(FurtherFeatures, FeedTheirOwnPlaceholders) {
  for (const char* backend : {"interp", "cpu"}) {
    EstimatorOptions o;
    o.backend = parse_backend(backend);
    Estimator est(shifted_logits, RunConfig{}, Params{}, o);
    const TrainStats st = est.train([] { return std::make_unique<WithShift>(0); }, 2);
    // A shift of +-40 decides every example: the loss is ~40 for class 1, ~0 for class 0.
    const double class1 = [] {
      const auto ds = testkit::blobs(64, 3);
      int n = 0;
      for (int64_t i = 0; i < 16; ++i) n += static_cast<int>(ds->labels.get_int(i)) == 1;
      return n / 16.0;
    }();
    EXPECT_NEAR(st.final_loss, 80.0 * class1, 8.0) << backend;
  }
}

TEST(FurtherFeatures, WithOtherRowsAreADataError) {
  Estimator est(shifted_logits, RunConfig{}, Params{}, testkit::interp());
  const std::string e = error_of([&] { est.train([] { return std::make_unique<WithShift>(3); }, 1); });
  EXPECT_TRUE(contains(e, "[input_fn] the batch of global step 0: feature 'shift' has shape [3,2] but the first "
                          "feature [16,8]: every feature needs one row per example"))
      << e;
}

}  // namespace
}  // namespace kiln
