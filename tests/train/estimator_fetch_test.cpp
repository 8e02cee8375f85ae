// Hooks fetch values by the names model_fn gave them, as in TensorFlow: "loss" is the value
// named "loss", not the EstimatorSpec's loss when model_fn named another value so. A value
// a hook requests for one loop (RunContext::request_fetch) is an output of that loop only.
#include <gtest/gtest.h>

#include "kiln/train/estimator.h"
#include "kiln/models/models.h"
#include "kiln/train/optimizer.h"
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

// Requests "total" (the spec's loss, model_fn's "loss" + 0.5) for the loops starting at a
// multiple of `every`, and records what each loop's values held.
struct Requests : Hook {
  explicit Requests(int64_t every, std::string name = "total") : every(every), name(std::move(name)) {}
  void before_run(RunContext& ctx) override {
    asked = ctx.global_step % every == 0;
    if (asked) ctx.request_fetch(name), ctx.request_fetch(name);  // twice: asked for once
  }
  void after_run(RunContext& ctx, const RunValues& v) override {
    const auto it = v.values.find(name);
    present.push_back(it != v.values.end());
    if (asked && it != v.values.end() && name == "total") {
      EXPECT_DOUBLE_EQ(it->second.item(), v.loss()) << "the last step's value, at step " << ctx.global_step;
      EXPECT_NEAR(it->second.item() - v.values.at("loss").item(), 0.5, 1e-6);
    }
    EXPECT_EQ(it != v.values.end(), asked) << "the loop reaching step " << ctx.global_step;
  }
  int64_t every;
  std::string name;
  bool asked = false;
  std::vector<bool> present;
};

EstimatorSpec with_named_total(const Tensor& x, const Tensor& y, ModeKeys mode, const Params& p) {
  EstimatorSpec spec = with_total_loss(x, y, mode, p);
  spec.loss = spec.loss.named("total");
  return spec;
}

TEST(RequestedFetches, AreOutputsOfTheLoopsThatAskForThemOnly) {
  Estimator est(with_named_total, RunConfig{}, Params{}, testkit::interp());
  auto hook = std::make_shared<Requests>(3);
  est.train(testkit::training_input(testkit::blobs(64, 3), 16), 7, {hook});
  EXPECT_EQ(hook->present, (std::vector<bool>{true, false, false, true, false, false, true}));
}

TEST(RequestedFetches, LeaveTheTrainingAsItWouldBeWithoutThem) {
  const auto train = [](HookList hooks) {
    Estimator est(with_named_total, RunConfig{}, Params{}, testkit::interp());
    est.train(testkit::training_input(testkit::blobs(64, 3), 16, 5), 6, hooks);
    return est.variables();
  };
  const Variables plain = train({}), requested = train({std::make_shared<Requests>(2)});
  ASSERT_EQ(plain.size(), requested.size());
  for (const auto& [name, v] : plain)
    EXPECT_TRUE(v.bitwise_equal(requested.at(name))) << name;
}

TEST(RequestedFetches, ReachTheLastStepOfALoopTheInputEndsIn) {
  RunConfig config;
  config.iterations_per_loop = 4;
  Estimator est(with_named_total, config, Params{}, testkit::interp());
  auto hook = std::make_shared<Requests>(1);
  // 96 examples in batches of 16: 6 steps, loops of 4 and 2 (the input ends in the second).
  const TrainStats st = est.train(testkit::eval_input(testkit::blobs(96, 3), 16), 100, {hook});
  EXPECT_EQ(st.global_step, 6);
  EXPECT_EQ(hook->present, (std::vector<bool>{true, true}));
}

TEST(RequestedFetches, OfWhatThePlainGraphOutputsBuildNoOtherGraph) {
  // "loss" is an output of every step: asking for it needs no second executable.
  EstimatorOptions compiled;
  Estimator est(with_named_total, RunConfig{}, Params{}, compiled);
  est.train(testkit::training_input(testkit::blobs(64, 3), 16), 3, {std::make_shared<Requests>(1, "loss")});
  EXPECT_EQ(est.compile_summary().graphs, 1);
}

TEST(RequestedFetches, OfANameNotInTheGraphAreAConfigErrorNamingIt) {
  Estimator est(with_named_total, RunConfig{}, Params{}, testkit::interp());
  try {
    est.train(testkit::training_input(testkit::blobs(64, 3), 16), 3, {std::make_shared<Requests>(1, "nope")});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
