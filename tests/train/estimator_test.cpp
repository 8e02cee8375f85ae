#include "kiln/train/estimator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "kiln/models/models.h"
#include "support/train_inputs.h"

namespace kiln {
namespace {
namespace fs = std::filesystem;

using testkit::blobs;
using testkit::eval_input;
using testkit::interp;
using testkit::training_input;

Estimator mlp_estimator(RunConfig cfg = {}, const std::string& optimizer = "momentum", double lr = 0.1,
                        EstimatorOptions o = interp()) {
  return Estimator(classifier_model_fn(mlp_model({16}, 2, 7)), std::move(cfg),
                   Params{{"optimizer", optimizer}, {"learning_rate", lr}}, std::move(o));
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("kiln-est-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

TEST(Estimator, TrainReducesLossAndIsDeterministic) {
  const auto ds = blobs(256, 3);
  for (const char* opt : {"sgd", "momentum", "adam"}) {
    const double lr = std::string(opt) == "adam" ? 0.01 : 0.1;
    Estimator a = mlp_estimator({}, opt, lr), b = mlp_estimator({}, opt, lr);
    const TrainStats ra = a.train(training_input(ds, 32), 15), rb = b.train(training_input(ds, 32), 15);
    ASSERT_EQ(ra.losses.size(), 15u);
    EXPECT_EQ(ra.losses, rb.losses) << opt;
    EXPECT_LT(ra.losses.back(), ra.losses.front()) << opt;
    EXPECT_EQ(ra.global_step, 15);
    EXPECT_EQ(a.global_step(), 15);
    Estimator c = mlp_estimator({}, opt, lr);
    EXPECT_NE(c.train(training_input(ds, 32, 1), 15).losses, ra.losses) << opt;  // other shuffle seed
  }
}

// logits = features * scale (scale a scalar variable = 1): predictions and metrics are
// known in closed form.
EstimatorSpec scaled_identity(const Tensor& x, const Tensor& y, ModeKeys mode, const Params&) {
  const Tensor scale = variable(x.graph(), "scale", DType::f32, {}, Init::constant(1.0));
  const Tensor logits = x * scale;
  EstimatorSpec spec;
  spec.predictions["classes"] = argmax(logits, 1);
  spec.predictions["logits"] = logits;
  if (mode == ModeKeys::predict) return spec;
  spec.loss = reduce_mean(sparse_softmax_cross_entropy(logits, y));
  spec.eval_metrics["accuracy"] = accuracy_metric(y, spec.predictions["classes"]);
  spec.eval_metrics["mean_label"] = mean_metric(y);
  if (mode == ModeKeys::train) spec.train_op = make_sgd(0.1)->minimize(spec.loss);
  return spec;
}

std::shared_ptr<const data::Dataset> four_examples() {
  return std::make_shared<const data::Dataset>(data::Dataset::from_memory(
      Array::from_floats(DType::f32, {4, 2}, std::vector<float>{1, 0, 0, 1, 1, 0, 0, 1}),
      Array::from_ints(DType::i32, {4}, std::vector<int64_t>{0, 1, 1, 1})));
}

TEST(Estimator, EvaluateAndPredictOnKnownInputs) {
  Estimator est(scaled_identity, {}, {}, interp());
  EXPECT_THROW(est.evaluate(eval_input(four_examples(), 3)), CheckpointError);  // nothing trained yet
  est.train(training_input(four_examples(), 4), 1);
  // Put the state back to scale = 1 so the numbers are exact.
  const_cast<Variables&>(est.variables())["scale"] = Array::scalar(DType::f32, 1.0);
  const Evaluation ev = est.evaluate(eval_input(four_examples(), 3));  // batches of 3 and 1
  EXPECT_EQ(ev.examples, 4);
  EXPECT_EQ(ev.global_step, 1);
  EXPECT_DOUBLE_EQ(ev.at("accuracy"), 0.75);
  EXPECT_DOUBLE_EQ(ev.at("mean_label"), 0.75);
  const double small = std::log1p(std::exp(-1.0)), big = std::log1p(std::exp(1.0));
  // TensorFlow's definition: the mean of the batches' mean losses (3 examples, then 1),
  // not the mean over the examples ((3 * small + big) / 4).
  EXPECT_NEAR(ev.at("loss"), ((2 * small + big) / 3 + small) / 2, 1e-6);
  EXPECT_THROW(ev.at("precision"), ConfigError);
  EXPECT_EQ(est.evaluate(eval_input(four_examples(), 3), 1).examples, 3);  // steps limit

  const auto pred = est.predict(eval_input(four_examples(), 3));
  ASSERT_EQ(pred.at("classes").shape(), (Shape{4}));
  EXPECT_EQ(pred.at("classes").to_ints(), (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(pred.at("logits").shape(), (Shape{4, 2}));
  EXPECT_EQ(pred.at("logits").to_floats(), (std::vector<float>{1, 0, 0, 1, 1, 0, 0, 1}));
}

// Records every hook call, and optionally stops at a step.
struct Recorder : Hook {
  std::vector<std::string>* log;
  std::string tag;
  int64_t stop_at;
  Recorder(std::vector<std::string>* l, std::string t, int64_t stop = -1) : log(l), tag(std::move(t)), stop_at(stop) {}
  void begin(RunContext& c) override { log->push_back(tag + " begin " + std::to_string(c.global_step)); }
  void before_run(RunContext& c) override {
    log->push_back(tag + " before " + std::to_string(c.global_step) + "+" + std::to_string(c.loop_size));
  }
  void after_run(RunContext& c, const RunValues& v) override {
    log->push_back(tag + " after " + std::to_string(c.global_step) + " losses " + std::to_string(v.losses.size()) +
                   " step " + std::to_string(static_cast<int64_t>(v.values.at("global_step").item())));
    if (c.global_step == stop_at) c.request_stop();
  }
  void end(RunContext& c) override { log->push_back(tag + " end " + std::to_string(c.global_step)); }
};

TEST(Estimator, HooksSeeLoopBoundariesInOrder) {
  RunConfig cfg;
  cfg.iterations_per_loop = 3;
  Estimator est = mlp_estimator(cfg);
  std::vector<std::string> log;
  est.train(training_input(blobs(64, 1), 8), 7,
            {std::make_shared<Recorder>(&log, "a"), std::make_shared<Recorder>(&log, "b")});
  const std::vector<std::string> expected = {
      "a begin 0",   "b begin 0",   "a before 0+3",  "b before 0+3",  "a after 3 losses 3 step 3",
      "b after 3 losses 3 step 3",  "a before 3+3",  "b before 3+3",  "a after 6 losses 3 step 6",
      "b after 6 losses 3 step 6",  "a before 6+1",  "b before 6+1",  "a after 7 losses 1 step 7",
      "b after 7 losses 1 step 7",  "a end 7",       "b end 7"};
  EXPECT_EQ(log, expected);
}

TEST(Estimator, StopRequestsEndTheRunAfterTheLoop) {
  Estimator est = mlp_estimator();
  std::vector<std::string> log;
  const TrainStats st = est.train(training_input(blobs(64, 1), 8), 100, {std::make_shared<Recorder>(&log, "h", 4)});
  EXPECT_EQ(st.global_step, 4);
  EXPECT_TRUE(st.stopped_by_hook);
  EXPECT_EQ(log.back(), "h end 4");
  // StopAtStepHook, and a later train() call continues from the in-memory state.
  const TrainStats st2 = est.train(training_input(blobs(64, 1), 8), 100, {std::make_shared<StopAtStepHook>(9)});
  EXPECT_EQ(st2.start_step, 4);
  EXPECT_EQ(st2.global_step, 9);
}

TEST(Estimator, InterruptStopsAfterTheCurrentStepAndCheckpoints) {
  TempDir d;
  RunConfig cfg;
  cfg.model_dir = d.path.string();
  cfg.iterations_per_loop = 5;
  std::atomic<bool> stop{false};
  EstimatorOptions o = interp();
  o.interrupt = &stop;
  Estimator est(classifier_model_fn(mlp_model({16}, 2, 7)), cfg, {}, o);
  struct Trip : Hook {
    std::atomic<bool>* flag;
    explicit Trip(std::atomic<bool>* f) : flag(f) {}
    void after_run(RunContext&, const RunValues&) override { flag->store(true); }
  };
  const TrainStats st = est.train(training_input(blobs(64, 1), 8), 100, {std::make_shared<Trip>(&stop)});
  EXPECT_TRUE(st.interrupted);
  EXPECT_EQ(st.global_step, 6);  // the loop of 5, then one step of the next
  EXPECT_EQ(CheckpointDir(cfg.model_dir, 0).latest_step(), 6);
}

TEST(Estimator, TellMeStepOrLossHookReportsTheNamedValue) {
  Estimator est = mlp_estimator();
  auto step = std::make_shared<TellMeStepOrLossHook>("global_step", 5);
  auto loss = TellMeStepOrLossHook::loss("loss", 0.3);
  std::vector<double> seen;
  loss->on_report = [&](double v) { seen.push_back(v); };
  const TrainStats st = est.train(training_input(blobs(64, 1), 8), 5, {step, loss});
  EXPECT_EQ(step->last_value(), 5.0);
  EXPECT_EQ(step->reports(), 5);
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen.back(), st.final_loss);
  EXPECT_EQ(step->kind(), TellMeStepOrLossHook::Kind::step);
  EXPECT_EQ(loss->target(), 0.3);
}

TEST(Estimator, AMissingHookNameFailsBeforeTheFirstStep) {
  TempDir d;
  RunConfig cfg;
  cfg.model_dir = d.path.string();
  Estimator est = mlp_estimator(cfg);
  std::vector<std::string> log;
  try {
    est.train(training_input(blobs(64, 1), 8), 5,
              {std::make_shared<Recorder>(&log, "r"), std::make_shared<TellMeStepOrLossHook>("global_stpe", 5)});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'global_stpe'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("global_step"), std::string::npos) << msg;  // lists what exists
  }
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(est.global_step(), 0);
  EXPECT_TRUE(CheckpointDir(cfg.model_dir, 0).steps().empty());
  EXPECT_THROW(TellMeStepOrLossHook("global_step", 0), ConfigError);
  EXPECT_THROW(TellMeStepOrLossHook::loss("loss", -1), ConfigError);
}

TEST(Estimator, ResumeFromCheckpointMatchesAnUninterruptedRunBitForBit) {
  TempDir d;
  const auto ds = blobs(100, 5);
  RunConfig cfg;
  cfg.model_dir = d.path.string();
  cfg.save_checkpoints_steps = 4;
  cfg.keep_checkpoint_max = 2;
  std::ostringstream log;
  {
    EstimatorOptions o = interp();
    o.log = &log;
    Estimator first = mlp_estimator(cfg, "momentum", 0.1, o);
    EXPECT_EQ(first.train(training_input(ds, 16), 10).global_step, 10);
  }
  EXPECT_EQ(CheckpointDir(cfg.model_dir, 0).steps(), (std::vector<int64_t>{8, 10}));
  EstimatorOptions o = interp();
  o.log = &log;
  Estimator resumed = mlp_estimator(cfg, "momentum", 0.1, o);
  const TrainStats st = resumed.train(training_input(ds, 16), 23);
  EXPECT_TRUE(st.resumed);
  EXPECT_EQ(st.start_step, 10);
  EXPECT_EQ(st.steps, 13);
  EXPECT_NE(log.str().find("resumed from checkpoint at step 10"), std::string::npos) << log.str();
  // max_steps counts the global step: asking again for 23 trains nothing.
  EXPECT_EQ(resumed.train(training_input(ds, 16), 23).steps, 0);

  Estimator straight = mlp_estimator({});
  straight.train(training_input(ds, 16), 23);
  ASSERT_EQ(straight.variables().size(), resumed.variables().size());
  for (const auto& [name, a] : straight.variables())
    EXPECT_TRUE(resumed.variables().at(name).bitwise_equal(a)) << name;  // weights, slots, global_step

  // A fresh Estimator on the same model_dir evaluates from the latest checkpoint.
  Estimator reader(classifier_model_fn(mlp_model({16}, 2, 7)), cfg, {}, interp());
  EXPECT_EQ(reader.evaluate(eval_input(ds, 50)).global_step, 23);
}

TEST(Estimator, ACheckpointOfAnotherModelIsAClearError) {
  TempDir d;
  RunConfig cfg;
  cfg.model_dir = d.path.string();
  Estimator(classifier_model_fn(mlp_model({16}, 2, 7)), cfg, {}, interp()).train(training_input(blobs(64, 1), 8), 2);
  const auto before = fs::last_write_time(CheckpointDir(cfg.model_dir, 0).path_for(2) + ".index");
  Estimator other(classifier_model_fn(mlp_model({12}, 2, 7)), cfg, {}, interp());
  try {
    other.train(training_input(blobs(64, 1), 8), 4);
    FAIL() << "expected CheckpointError";
  } catch (const CheckpointError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'dense0/kernel' is f32[8,12] in the model but f32[8,16] in the checkpoint"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'dense0/kernel/Momentum'"), std::string::npos) << msg;
  }
  EXPECT_EQ(CheckpointDir(cfg.model_dir, 0).steps(), (std::vector<int64_t>{2}));
  EXPECT_EQ(fs::last_write_time(CheckpointDir(cfg.model_dir, 0).path_for(2) + ".index"), before);
}

TEST(Estimator, NanLossIsReportedWithTheStep) {
  auto bad = [](const Tensor& x, const Tensor& y, ModeKeys, const Params&) {
    const Tensor w = variable(x.graph(), "w", DType::f32, {8, 2}, Init::constant(0.1));
    EstimatorSpec spec;
    // Finite for the first two steps, then log of a negative number.
    const Tensor step = cast(global_step(x.graph()), DType::f32);
    spec.loss = reduce_mean(sparse_softmax_cross_entropy(matmul(x, w), y)) + log(1.5f - step);
    spec.train_op = make_sgd(0.01)->minimize(spec.loss);
    return spec;
  };
  TempDir d;
  RunConfig cfg;
  cfg.model_dir = d.path.string();
  Estimator est(bad, cfg, {}, interp());
  try {
    est.train(training_input(blobs(64, 1), 8), 10);
    FAIL() << "expected NanLossError";
  } catch (const NanLossError& e) {
    EXPECT_NE(std::string(e.what()).find("[nan_guard] loss is nan at step 3"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(CheckpointDir(cfg.model_dir, 0).steps().empty());  // the NaN state is not saved
}

TEST(Estimator, BadArgumentsAreClearErrors) {
  Estimator est = mlp_estimator();
  EXPECT_THROW(est.train(training_input(blobs(64, 1), 8), 0), ConfigError);
  EXPECT_THROW(est.train(training_input(blobs(64, 1), 8), -5), ConfigError);
  RunConfig cfg;
  cfg.experimental_config.accelerate_train_mode = "fast1|step|0.9";
  EXPECT_THROW(mlp_estimator(cfg).train(training_input(blobs(64, 1), 8), 5), ConfigError);
  RunConfig invalid;
  invalid.iterations_per_loop = 0;
  EXPECT_THROW(mlp_estimator(invalid), ConfigError);
  RunConfig unwritable;
  unwritable.model_dir = "/proc/kiln-cannot-write-here";
  EXPECT_THROW(mlp_estimator(unwritable).train(training_input(blobs(64, 1), 8), 5), CheckpointError);
  EXPECT_THROW(Params{}.number("lr"), ConfigError);
  EXPECT_THROW((Params{{"lr", std::string("x")}}.number("lr")), ConfigError);
}

// As in TensorFlow, an epoch's last batch may be short: 40 examples in batches of 16 train
// 3 steps (16, 16, 8), and an endless input of such epochs a short step at every epoch's
// end; the graph for the short batch is built once, when it is first met.
TEST(Estimator, AShortLastBatchTrainsAsInTensorFlow) {
  const auto ds = blobs(40, 3);
  std::map<std::string, Variables> after;
  for (const char* backend : {"interp", "cpu"}) {
    EstimatorOptions o;
    o.backend = parse_backend(backend);
    Estimator once = mlp_estimator({}, "sgd", 0.1, o);
    const TrainStats st = once.train(eval_input(ds, 16), 100);
    EXPECT_EQ(st.steps, 3) << backend;
    EXPECT_EQ(once.global_step(), 3) << backend;
    for (double loss : st.losses) EXPECT_TRUE(std::isfinite(loss)) << backend;
    after[backend] = once.variables();

    Estimator epochs = mlp_estimator({}, "sgd", 0.1, o);
    const InputFn endless = [ds] {
      return data::batches(ds, data::BatcherOptions{16, 0, /*shuffle=*/false, /*drop_remainder=*/false, false});
    };
    EXPECT_EQ(epochs.train(endless, 9).steps, 9) << backend;  // three epochs, three short steps
    if (o.backend == Backend::cpu) EXPECT_EQ(epochs.compile_summary().graphs, 2) << "one graph per batch shape";
  }
  for (const auto& [name, value] : after["interp"]) {
    const std::vector<float> a = value.to_floats(), b = after["cpu"].at(name).to_floats();
    ASSERT_EQ(a.size(), b.size()) << name;
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4) << name << "[" << i << "]";
  }
}

// accelerate_train_mode runs a short batch in either precision (each gets its graph).
TEST(Estimator, AShortLastBatchTrainsInBothPhasesOfAccelerateTrainMode) {
  RunConfig cfg;
  cfg.experimental_config.accelerate_train_mode = "fast1|step|0.5";
  Estimator est = mlp_estimator(cfg);
  const InputFn endless = [ds = blobs(40, 3)] {
    return data::batches(ds, data::BatcherOptions{16, 0, false, /*drop_remainder=*/false, false});
  };
  const TrainStats st = est.train(endless, 12, {std::make_shared<TellMeStepOrLossHook>("global_step", 12)});
  EXPECT_EQ(st.steps, 12);
  ASSERT_TRUE(st.accelerate);
  EXPECT_EQ(st.accelerate->low_steps, 6);
  EXPECT_EQ(st.accelerate->original_steps, 6);
}

// A train() whose input ended leaves the next train()'s input_fn call to start afresh, as
// every TensorFlow train() does (tensorflow/models' train/evaluate loop), also when the
// input ended exactly at max_steps and when a new Estimator resumes from the checkpoint.
TEST(Estimator, ATrainAfterTheInputEndedStartsTheInputAnew) {
  TempDir d;
  RunConfig cfg;
  cfg.model_dir = d.path.string();
  const InputFn one_epoch = eval_input(blobs(40, 3), 16);  // 3 batches
  Estimator est = mlp_estimator(cfg);
  EXPECT_EQ(est.train(one_epoch, 100).steps, 3);
  EXPECT_EQ(est.train(one_epoch, 100).steps, 3);
  EXPECT_EQ(est.global_step(), 6);
  EXPECT_EQ(est.train(one_epoch, 9).steps, 3);  // used up exactly at max_steps
  EXPECT_EQ(est.train(one_epoch, 100).steps, 3);
  Estimator resumed = mlp_estimator(cfg);
  const TrainStats st = resumed.train(one_epoch, 100);
  EXPECT_TRUE(st.resumed);
  EXPECT_EQ(st.steps, 3);
  EXPECT_EQ(resumed.global_step(), 15);
  // An input not used up is continued where it stopped (one batch a step), as before.
  Estimator part = mlp_estimator();
  EXPECT_EQ(part.train(one_epoch, 2).steps, 2);
  EXPECT_EQ(part.train(one_epoch, 100).steps, 1);
}

// A precision mode reaches the backend: mixed bfloat16 trains (the compiler inserts the
// casts; the interpreter runs the same lowered graph).
TEST(Estimator, MixedPrecisionModesTrain) {
  for (const char* mode : {"allow_mix_precision_bf16", "allow_mix_precision_fp16"}) {
    RunConfig mixed;
    mixed.precision_mode = mode;
    Estimator est = mlp_estimator(mixed);
    const TrainStats st = est.train(training_input(blobs(256, 1), 32), 40);
    EXPECT_EQ(st.global_step, 40) << mode;
    EXPECT_LT(st.final_loss, 0.5) << mode;
  }
}

}  // namespace
}  // namespace kiln
