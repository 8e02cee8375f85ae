// accelerate_train_mode through the Estimator: the hook requirement, the exact switch
// inside loops, state carried over bit for bit, the float16 loss scaler, the divergence
// guard, checkpoints across plain and accelerated runs, both executables in the cache.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "kiln/train/estimator.h"
#include "kiln/models/models.h"
#include "kiln/train/optimizer.h"
#include "support/temp_files.h"
#include "support/train_inputs.h"

namespace kiln {
namespace {
namespace fs = std::filesystem;
using testkit::blobs;
using testkit::eval_input;
using testkit::training_input;

RunConfig accelerated(const std::string& mode, int64_t loop = 1) {
  RunConfig c;
  c.experimental_config.accelerate_train_mode = mode;
  c.iterations_per_loop = loop;
  return c;
}

Estimator mlp(RunConfig cfg, EstimatorOptions o = testkit::interp(), std::vector<int64_t> hidden = {16}) {
  return Estimator(classifier_model_fn(mlp_model(std::move(hidden), 2, 7)), std::move(cfg),
                   Params{{"optimizer", std::string("momentum")}, {"learning_rate", 0.1}}, std::move(o));
}

std::shared_ptr<Hook> steps_hook(int64_t total) { return std::make_shared<TellMeStepOrLossHook>("global_step", total); }

// Records, after every loop, the phase, the variables and the checkpoint state.
struct Recorder : Hook {
  std::vector<PrecisionPhase> phases;
  std::vector<Variables> vars;
  std::vector<nlohmann::json> states;
  std::vector<RunValues> values;
  void after_run(RunContext& ctx, const RunValues& v) override {
    phases.push_back(ctx.phase);
    vars.push_back(*ctx.variables);
    states.push_back(ctx.train_state());
    values.push_back(v);
  }
};

void expect_same_state(const Variables& a, const Variables& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (const auto& [name, value] : a) {
    ASSERT_TRUE(b.count(name)) << what << ": " << name;
    EXPECT_EQ(value.to_floats(), b.at(name).to_floats()) << what << ": " << name;
  }
}

TEST(Accelerate, TrainNeedsTheRightTellMeStepOrLossHook) {
  const auto ds = blobs(64, 1);
  auto message = [&](const std::string& mode, HookList hooks) -> std::string {
    try {
      mlp(accelerated(mode)).train(training_input(ds, 8), 5, hooks);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string none = message("fast1|step|0.9", {});
  EXPECT_NE(none.find("needs a TellMeStepOrLossHook"), std::string::npos) << none;
  EXPECT_NE(none.find("TellMeStepOrLossHook>(\"global_step\", total_step)"), std::string::npos) << none;
  const std::string loss_none = message("fast1|loss|1.05", {});
  EXPECT_NE(loss_none.find("TellMeStepOrLossHook::loss(\"loss\", final_loss)"), std::string::npos) << loss_none;
  const std::string wrong = message("fast1|step|0.9", {TellMeStepOrLossHook::loss("loss", 0.3)});
  EXPECT_NE(wrong.find("splits by step, but the TellMeStepOrLossHook reports the loss"), std::string::npos) << wrong;
  const std::string two = message("fast1|step|0.9", {steps_hook(5), steps_hook(5)});
  EXPECT_NE(two.find("got 2 TellMeStepOrLossHooks"), std::string::npos) << two;
}

TEST(Accelerate, TheSwitchIsExactAlsoInsideALoop) {
  const auto ds = blobs(256, 2);
  for (int64_t loop : {1, 3, 7, 20}) {
    int events = 0;
    EstimatorOptions o = testkit::interp();
    o.on_precision_switch = [&](const PrecisionSwitchEvent& e) {
      ++events;
      EXPECT_EQ(e.step, 11);
      EXPECT_EQ(e.requested_step, 11);
      EXPECT_EQ(e.reason, SwitchReason::step);
      EXPECT_EQ(e.reason_text(), "step");
      EXPECT_EQ(e.low_phase, PrecisionPhase::mixed_bfloat16);
    };
    Estimator est = mlp(accelerated("fast1|step|0.57", loop), o);
    auto rec = std::make_shared<Recorder>();
    const TrainStats st = est.train(training_input(ds, 32), 20, {steps_hook(20), rec});
    ASSERT_TRUE(st.accelerate.has_value());
    const AccelerateStats& a = *st.accelerate;
    EXPECT_EQ(events, 1) << loop;
    EXPECT_EQ(a.switch_step, 11) << loop;
    EXPECT_EQ(a.low_steps, 11) << loop;
    EXPECT_EQ(a.original_steps, 9) << loop;
    EXPECT_EQ(a.requested_switch_step, 11);
    EXPECT_EQ(a.mode, "fast1|step|0.57");
    EXPECT_EQ(st.global_step, 20);
    // The phase of each loop's last step: low for steps 0..10.
    for (size_t i = 0; i < rec->phases.size(); ++i) {
      const int64_t last = std::min<int64_t>(static_cast<int64_t>(i + 1) * loop, 20) - 1;
      EXPECT_EQ(rec->phases[i], last >= 11 ? PrecisionPhase::original : PrecisionPhase::mixed_bfloat16)
          << loop << " loop " << i;
    }
  }
}

// The low phase really runs in bfloat16: its losses differ from a float32 run's, and the
// original phase then continues from exactly the state the low phase left.
TEST(Accelerate, StateCarriesOverBitForBitAndCheckpointsWorkBothWays) {
  const auto ds = blobs(256, 3);
  const fs::path root = testkit::fresh_dir("accelerate-carry");
  RunConfig acc = accelerated("fast1|step|0.5");
  acc.model_dir = (root / "acc").string();
  Estimator a = mlp(acc);
  a.train(training_input(ds, 32), 10, {steps_hook(20)});  // stops at step 10, still low
  const Variables at10 = a.variables();
  const TrainStats rest = a.train(training_input(ds, 32), 12, {steps_hook(20)});
  ASSERT_TRUE(rest.accelerate.has_value());
  EXPECT_EQ(rest.accelerate->low_steps, 0);  // step 10 is the first original one
  EXPECT_EQ(rest.accelerate->switch_step, 10);

  // A plain float32 run from the accelerated run's checkpoint at 10 takes the same two steps.
  fs::copy(root / "acc", root / "plain");
  for (const auto& e : fs::directory_iterator(root / "plain"))
    if (e.path().filename().string().find("model.ckpt-12.") != std::string::npos) fs::remove(e.path());
  RunConfig plain;
  plain.model_dir = (root / "plain").string();
  Estimator b = mlp(plain);
  b.train(training_input(ds, 32), 12);
  expect_same_state(a.variables(), b.variables(), "original steps after the switch");
  // ... and the low phase did differ from float32.
  Estimator f32 = mlp({});
  f32.train(training_input(ds, 32), 10);
  EXPECT_NE(f32.variables().at("dense0/kernel").to_floats(), at10.at("dense0/kernel").to_floats());

  // Back: the plain run's checkpoint (step 12) continues in an accelerated run, which is
  // past its switch step and so runs in the original precision from the start.
  fs::copy(root / "plain", root / "back");
  RunConfig back = accelerated("fast1|step|0.5");
  back.model_dir = (root / "back").string();
  Estimator c = mlp(back);
  const TrainStats sc = c.train(training_input(ds, 32), 14, {steps_hook(20)});
  EXPECT_TRUE(sc.resumed);
  EXPECT_EQ(sc.accelerate->low_steps, 0);
  EXPECT_EQ(sc.accelerate->original_steps, 2);
  b.train(training_input(ds, 32), 14);
  expect_same_state(c.variables(), b.variables(), "accelerated run resumed from a plain checkpoint");
  fs::remove_all(root);
}

// Batches of 8 from an in-order pass; the examples of the listed batches get `bad` in
// their first feature.
InputFn poisoned_input(int64_t batches, std::vector<int64_t> poisoned, float bad) {
  auto clean = blobs(batches * 8, 4);
  Array x = clean->features, y = clean->labels;
  for (int64_t b : poisoned)
    for (int64_t i = 0; i < 8; ++i) x.set((b * 8 + i) * 8, bad);
  return eval_input(std::make_shared<const data::Dataset>(data::Dataset::from_memory(std::move(x), std::move(y))), 8);
}

// The paths that differ between backends (the float16 scaler, the divergence guard, the
// loss split) run on the interpreter and on the compiled default backend.
EstimatorOptions on(const std::string& backend) {
  EstimatorOptions o;
  o.backend = parse_backend(backend);
  return o;
}

class AccelerateOn : public ::testing::TestWithParam<std::string> {};

TEST_P(AccelerateOn, Float16ScalerHalvesOnInfAndSkipsTheUpdate) {
  Estimator est = mlp(accelerated("fast|step|0.9"), on(GetParam()));
  auto rec = std::make_shared<Recorder>();
  const TrainStats st =
      est.train(poisoned_input(10, {4}, std::numeric_limits<float>::infinity()), 10, {steps_hook(10), rec});
  ASSERT_EQ(rec->states.size(), 10u);
  auto scale = [&](size_t i) { return rec->states[i]["loss_scaler"]["scale"].get<double>(); };
  EXPECT_EQ(scale(4), scale(3) / 2);  // step 5 (index 4) saw an infinite gradient
  EXPECT_TRUE(rec->values[4].skipped(0));
  for (const auto& [name, value] : rec->vars[3]) {
    if (name == "global_step") continue;
    EXPECT_EQ(rec->vars[4].at(name).to_floats(), value.to_floats()) << name;
  }
  EXPECT_EQ(rec->vars[4].at("global_step").item(), 5);  // the step still counts
  EXPECT_GE(st.accelerate->skipped_updates, 1);
  EXPECT_EQ(st.accelerate->loss_scale, 1.0);  // switched at 9: no scaling after the switch
  EXPECT_EQ(st.accelerate->switch_step, 9);
  EXPECT_TRUE(std::isfinite(st.final_loss));
}

// The same on a small CNN (convolution, pooling and their float16 gradients compiled):
// batches of 8 images 6x6, the fifth batch infinite.
TEST_P(AccelerateOn, Float16ScalerSkipsTheUpdateOfASmallCnn) {
  const int64_t batches = 8, n = batches * 8, pixels = 36;
  Array x(DType::f32, {n, pixels}), y(DType::i32, {n});
  for (int64_t i = 0; i < n; ++i) {
    y.set(i, static_cast<double>(i % 2));
    for (int64_t j = 0; j < pixels; ++j) x.set(i * pixels + j, ((i * 7 + j * 3) % 11) / 11.0 + (i % 2) * 0.5);
  }
  for (int64_t i = 4 * 8; i < 5 * 8; ++i) x.set(i * pixels, std::numeric_limits<float>::infinity());
  const InputFn input =
      eval_input(std::make_shared<const data::Dataset>(data::Dataset::from_memory(std::move(x), std::move(y))), 8);
  Estimator est(classifier_model_fn(cnn_model(CnnShape{1, 6, 6, 4, 4, 8, 2}, 1)), accelerated("fast|step|0.9"),
                Params{{"optimizer", std::string("momentum")}, {"learning_rate", 0.05}}, on(GetParam()));
  auto rec = std::make_shared<Recorder>();
  const TrainStats st = est.train(input, batches, {steps_hook(batches), rec});
  ASSERT_EQ(rec->states.size(), static_cast<size_t>(batches));
  EXPECT_TRUE(rec->values[4].skipped(0));
  EXPECT_EQ(rec->states[4]["loss_scaler"]["scale"].get<double>(), rec->states[3]["loss_scaler"]["scale"].get<double>() / 2);
  for (const auto& [name, value] : rec->vars[3])
    if (name != "global_step") {
      EXPECT_EQ(rec->vars[4].at(name).to_floats(), value.to_floats()) << name;
    }
  EXPECT_EQ(st.accelerate->skipped_updates, 1);
  EXPECT_TRUE(std::isfinite(st.final_loss));
}

TEST_P(AccelerateOn, DivergenceSwitchesEarlyFromTheLastGoodState) {
  int events = 0;
  EstimatorOptions o = on(GetParam());
  o.on_precision_switch = [&](const PrecisionSwitchEvent& e) {
    ++events;
    EXPECT_EQ(e.reason, SwitchReason::divergence) << e.reason_text();
    EXPECT_EQ(e.reason_text().rfind("divergence: ", 0), 0u) << e.reason_text();
  };
  // A linear model: no ReLU between the input and the loss to stop a NaN.
  Estimator est = mlp(accelerated("fast1|step|0.9"), o, {});
  auto rec = std::make_shared<Recorder>();
  // Batches 2..6 are NaN: five non-finite losses in a row.
  const TrainStats st = est.train(poisoned_input(12, {2, 3, 4, 5, 6}, std::nanf("")), 12, {steps_hook(12), rec});
  EXPECT_EQ(events, 1);
  EXPECT_EQ(st.accelerate->switch_step, 7);
  EXPECT_EQ(st.accelerate->skipped_updates, 5);
  EXPECT_EQ(st.accelerate->low_steps, 7);
  EXPECT_EQ(st.accelerate->original_steps, 5);
  for (size_t i = 2; i <= 6; ++i) {
    EXPECT_TRUE(std::isnan(st.losses[i])) << i;
    for (const auto& [name, value] : rec->vars[1])
      if (name != "global_step") {
        EXPECT_EQ(rec->vars[i].at(name).to_floats(), value.to_floats()) << i << name;
      }
  }
  for (size_t i = 7; i < 12; ++i) EXPECT_TRUE(std::isfinite(st.losses[i])) << i;
  EXPECT_EQ(rec->phases[6], PrecisionPhase::mixed_bfloat16);  // step 6 ran low; step 7 is the first original one
  EXPECT_EQ(rec->phases[7], PrecisionPhase::original);
}

TEST_P(AccelerateOn, LossSplitSwitchesOnTheMovingMean) {
  RunConfig cfg = accelerated("fast1|loss|1.5");
  cfg.experimental_config.accelerate_loss_window = 4;
  Estimator est = mlp(cfg, on(GetParam()));
  // Target 1.5 x 0.2 = 0.3: the first full windows average about 0.51, 0.42 and 0.34, the
  // fourth about 0.26, so the switch comes at step 7, after windows that were above it.
  const TrainStats st = est.train(training_input(blobs(256, 5), 32), 30, {TellMeStepOrLossHook::loss("loss", 0.2)});
  ASSERT_TRUE(st.accelerate->switch_step.has_value());
  const int64_t s = *st.accelerate->switch_step;
  EXPECT_EQ(st.accelerate->switch_reason, SwitchReason::loss);
  ASSERT_GT(s, 4) << "the scenario must switch after a window above the target; losses "
                  << ::testing::PrintToString(st.losses);
  double mean = 0, before = 0;
  for (int64_t i = s - 4; i < s; ++i) mean += st.losses[static_cast<size_t>(i)] / 4;
  for (int64_t i = s - 5; i < s - 1; ++i) before += st.losses[static_cast<size_t>(i)] / 4;
  EXPECT_LE(mean, 0.3);
  EXPECT_GT(before, 0.3) << "the window before the switch was already below the target: the switch came late";
  EXPECT_EQ(st.accelerate->low_steps, s);
  EXPECT_DOUBLE_EQ(st.accelerate->loss_target, 0.3);
}

// The compiled backend switches at the same step as the interpreter, with the same losses
// (to bfloat16 rounding).
TEST(Accelerate, LossSplitSwitchesAtTheSameStepOnBothBackends) {
  RunConfig cfg = accelerated("fast1|loss|1.5");
  cfg.experimental_config.accelerate_loss_window = 4;
  const auto ds = blobs(256, 5);
  Estimator interp = mlp(cfg, on("interp")), cpu = mlp(cfg, on("cpu"));
  const TrainStats a = interp.train(training_input(ds, 32), 30, {TellMeStepOrLossHook::loss("loss", 0.5)});
  const TrainStats b = cpu.train(training_input(ds, 32), 30, {TellMeStepOrLossHook::loss("loss", 0.5)});
  ASSERT_TRUE(a.accelerate->switch_step.has_value());
  EXPECT_EQ(b.accelerate->switch_step, a.accelerate->switch_step);
  // The same losses up to bfloat16 rounding: where oneDNN has bfloat16 kernels (AVX-512)
  // the compiled step and the interpreter may round an intermediate differently.
  ASSERT_EQ(b.losses.size(), a.losses.size());
  for (size_t i = 0; i < a.losses.size(); ++i) EXPECT_NEAR(b.losses[i], a.losses[i], 2e-2 * std::fabs(a.losses[i]) + 1e-3) << i;
}

INSTANTIATE_TEST_SUITE_P(Backends, AccelerateOn, ::testing::Values("interp", "cpu"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// Both executables are compiled before the first step and cached as two entries; a second
// run loads both.
TEST(Accelerate, BothExecutablesComeFromTheCompileCache) {
  const fs::path cache = testkit::fresh_dir("accelerate-cache");
  RunConfig cfg = accelerated("fast1|step|0.5");
  cfg.experimental_config.graph_compiler_cache_dir = cache.string();
  EstimatorOptions cpu;
  cpu.backend = Backend::cpu;
  const auto ds = blobs(256, 6);
  Estimator first = mlp(cfg, cpu);
  const TrainStats a = first.train(training_input(ds, 32), 6, {steps_hook(6)});
  EXPECT_EQ(first.compile_summary().graphs, 2);
  EXPECT_EQ(first.compile_summary().cache_misses, 2);
  Estimator second = mlp(cfg, cpu);
  const TrainStats b = second.train(training_input(ds, 32), 6, {steps_hook(6)});
  EXPECT_EQ(second.compile_summary().cache_hits, 2);
  EXPECT_EQ(second.compile_summary().cache_misses, 0);
  EXPECT_EQ(a.losses, b.losses);
  EXPECT_EQ(b.accelerate->low_steps, 3);
  EXPECT_EQ(b.accelerate->original_steps, 3);
  fs::remove_all(cache);
}

}  // namespace
}  // namespace kiln
