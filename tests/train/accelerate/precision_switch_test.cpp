#include "train/accelerate/precision_switch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/train/checkpoint.h"
#include "kiln/base/error.h"

namespace kiln {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

PrecisionSwitch make(const std::string& mode, double target, int64_t max_steps = 100, int64_t window = 3,
                     double share = 0.95) {
  return PrecisionSwitch({AccelerateTrainMode::parse(mode), target, max_steps, window, share});
}

// Runs steps 0..total-1 as the Estimator does; returns the first original-precision step
// and checks that the switch happens exactly once and never goes back.
int64_t first_original_step(PrecisionSwitch& sw, int64_t total) {
  int64_t first = -1, switches = 0;
  for (int64_t step = 0; step < total; ++step) {
    switches += sw.before_step(step);
    if (sw.low()) {
      EXPECT_EQ(first, -1) << "back to low precision at step " << step;
      sw.after_low_step(step + 1, 1.0, true);
    } else if (first < 0) {
      first = step;
    }
  }
  EXPECT_LE(switches, 1);
  return first;
}

TEST(PrecisionSwitch, StepSplitSwitchesExactlyAtFloorRatioTimesTotal) {
  const struct {
    const char* mode;
    int64_t total;
    int64_t expected;
  } cases[] = {
      {"fast|step|0.9", 10000, 9000}, {"fast1|step|0.9", 10, 9},    {"fast1|step|0.57", 100, 57},
      {"fast1|step|0.3", 10, 3},      {"fast|step|0.2", 7, 1},      {"fast1|step|0.9", 1, 0},
      {"fast1|step|0.33", 1234, 407}, {"fast1|step", 1200, 1080},   {"fast|step|0.7", 999, 699},
  };
  for (const auto& c : cases) {
    PrecisionSwitch sw = make(c.mode, static_cast<double>(c.total));
    EXPECT_EQ(sw.planned_switch_step(), c.expected) << c.mode << " " << c.total;
    EXPECT_EQ(first_original_step(sw, c.total), c.expected) << c.mode << " " << c.total;
    ASSERT_TRUE(sw.switched().has_value());
    EXPECT_EQ(sw.switched()->step, c.expected);
    EXPECT_EQ(sw.switched()->reason, SwitchReason::step);
    EXPECT_EQ(sw.phase(), PrecisionPhase::original);
  }
}

TEST(PrecisionSwitch, PhaseNamesTheLowPolicy) {
  EXPECT_EQ(make("fast|step|0.5", 10).phase(), PrecisionPhase::mixed_float16);
  EXPECT_EQ(make("fast1|step|0.5", 10).phase(), PrecisionPhase::mixed_bfloat16);
  EXPECT_EQ(make("fast|step|0.5", 10).loss_scale(), 65536.0);  // float16 scales the loss
  EXPECT_EQ(make("fast1|step|0.5", 10).loss_scale(), 1.0);     // bfloat16 does not
}

TEST(PrecisionSwitch, LossSplitUsesTheMovingMeanOfFiniteLosses) {
  // Target 1.05 * 1.0; window 3. NaN and inf are ignored, not averaged.
  PrecisionSwitch sw = make("fast1|loss|1.05", 1.0);
  const double losses[] = {3.0, 0.5, kNaN, 2.0, std::numeric_limits<double>::infinity(), 1.0, 1.0, 1.1, 1.0, 0.9};
  // Windows after each finite loss: {3}, {3,.5}, {3,.5,2}=1.83, {.5,2,1}=1.17, {2,1,1}=1.33,
  // {1,1,1.1}=1.033 <= 1.05 -> switch after the 8th step (index 7).
  int64_t step = 0;
  for (double l : losses) {
    ASSERT_FALSE(sw.before_step(step));
    if (!sw.low()) break;
    const bool switched = sw.after_low_step(step + 1, l, true);
    ++step;
    if (switched) break;
  }
  EXPECT_EQ(step, 8);
  ASSERT_TRUE(sw.switched().has_value());
  EXPECT_EQ(sw.switched()->step, 8);
  EXPECT_EQ(sw.switched()->reason, SwitchReason::loss);
  EXPECT_NEAR(sw.window_mean(), (1.0 + 1.0 + 1.1) / 3, 1e-12);
  EXPECT_FALSE(sw.after_low_step(9, 0.1, true));  // one switch only
  EXPECT_FALSE(sw.before_step(9));
}

TEST(PrecisionSwitch, LossSplitWaitsForAFullWindow) {
  PrecisionSwitch sw = make("fast1|loss|1.05", 1.0, 100, 4);
  EXPECT_FALSE(sw.after_low_step(1, 0.1, true));
  EXPECT_FALSE(sw.after_low_step(2, 0.1, true));
  EXPECT_FALSE(sw.after_low_step(3, 0.1, true));
  EXPECT_TRUE(sw.after_low_step(4, 0.1, true));
}

TEST(PrecisionSwitch, LossSplitCapsTheLowShare) {
  PrecisionSwitch sw = make("fast1|loss|1.05", 0.01, 200, 3, 0.95);  // a target never reached
  EXPECT_EQ(sw.planned_switch_step(), 190);
  EXPECT_EQ(first_original_step(sw, 200), 190);
  EXPECT_EQ(sw.switched()->reason, SwitchReason::cap);
  PrecisionSwitch uncapped = make("fast1|loss|1.05", 0.01, 200, 3, 1.0);
  EXPECT_EQ(first_original_step(uncapped, 200), -1);  // share 1: the whole run stays low
}

TEST(PrecisionSwitch, DivergenceGuardAfterSeveralNonFiniteLossesInARow) {
  PrecisionSwitch sw = make("fast1|step|0.9", 100);
  int64_t step = 0;
  for (int i = 0; i < PrecisionSwitch::kDivergenceSteps - 1; ++i) EXPECT_FALSE(sw.after_low_step(++step, kNaN, false));
  EXPECT_FALSE(sw.after_low_step(++step, 0.5, true));  // a finite loss breaks the run
  for (int i = 0; i < PrecisionSwitch::kDivergenceSteps - 1; ++i) EXPECT_FALSE(sw.after_low_step(++step, kNaN, false));
  EXPECT_TRUE(sw.after_low_step(++step, kNaN, false));
  EXPECT_FALSE(sw.low());
  EXPECT_EQ(sw.switched()->step, step);
  EXPECT_EQ(sw.switched()->reason, SwitchReason::divergence);
  EXPECT_EQ(sw.switched()->reason_text(), "divergence: 5 non-finite losses in a row");
}

TEST(PrecisionSwitch, DivergenceGuardWhenTheLossScaleCollapses) {
  PrecisionSwitch sw = make("fast|step|0.9", 100);
  int64_t step = 0;
  while (sw.low() && step < 100) sw.after_low_step(++step, 0.7, false);  // finite loss, overflowing gradients
  EXPECT_EQ(step, 17);
  EXPECT_EQ(sw.switched()->reason, SwitchReason::divergence);
  EXPECT_NE(sw.switched()->detail.find("loss scale fell to 0.5"), std::string::npos) << sw.switched()->detail;
  EXPECT_EQ(sw.loss_scale(), 1.0);  // no scaling after the switch
}

// sess.run mode with a step split: the scaler moves without a loss, and never a loss split's
// window or the non-finite-loss guard (no loss was seen).
TEST(PrecisionSwitch, AStepWhoseLossIsUnseenMovesTheScalerOnly) {
  PrecisionSwitch sw = make("fast|step|0.9", 100);
  EXPECT_FALSE(sw.after_low_step_unseen_loss(1, false));
  EXPECT_EQ(sw.loss_scale(), 32768.0);
  EXPECT_EQ(sw.scaler().skipped_steps(), 1);
  for (int i = 0; i < PrecisionSwitch::kDivergenceSteps + 2; ++i) EXPECT_FALSE(sw.after_low_step_unseen_loss(2 + i, true));
  EXPECT_TRUE(sw.low());
  int64_t step = 10;
  while (sw.low() && step < 100) sw.after_low_step_unseen_loss(++step, false);
  EXPECT_EQ(step, 26);  // 32768 halved 16 times is 0.5, below the floor
  EXPECT_EQ(sw.switched()->reason, SwitchReason::divergence);
  EXPECT_FALSE(sw.after_low_step_unseen_loss(step + 1, false));  // after the switch: nothing moves
}

TEST(PrecisionSwitch, StateRoundTripsThroughACheckpoint) {
  // Target 1.05 * 2 = 2.1: the first full window, {2, 1.5, 1}, switches.
  PrecisionSwitch a = make("fast|loss|1.05", 2.0, 100, 3);
  a.after_low_step(1, 2.0, false);
  a.after_low_step(2, 1.5, true);
  PrecisionSwitch b = make("fast|loss|1.05", 2.0, 100, 3);
  b.restore(a.state(), 2);
  EXPECT_TRUE(b.low());
  EXPECT_EQ(b.loss_scale(), 32768.0);
  EXPECT_EQ(b.scaler().skipped_steps(), 1);
  EXPECT_EQ(b.window_mean(), a.window_mean());
  EXPECT_EQ(b.state(), a.state());

  // After the switch: stays original, with the switch step it had.
  a.after_low_step(3, 1.0, true);
  ASSERT_FALSE(a.low());
  PrecisionSwitch c = make("fast|loss|1.05", 2.0, 100, 3);
  const std::string note = c.restore(a.state(), 3);
  EXPECT_FALSE(c.low());
  EXPECT_EQ(c.switched()->step, 3);
  EXPECT_EQ(c.switched()->reason, SwitchReason::loss);
  EXPECT_NE(note.find("phase original"), std::string::npos) << note;
}

TEST(PrecisionSwitch, StateOfAPlainRunOrAnotherModeOnlyFixesTheStep) {
  PrecisionSwitch before = make("fast1|step|0.5", 100);
  before.restore(nlohmann::json{{"phase", "original"}}, 30);  // a plain float32 run's checkpoint
  EXPECT_TRUE(before.low());
  PrecisionSwitch after = make("fast1|step|0.5", 100);
  after.restore(nlohmann::json{{"phase", "original"}}, 60);
  EXPECT_FALSE(after.low());
  EXPECT_EQ(after.switched()->step, 60);
  PrecisionSwitch other = make("fast1|step|0.5", 100);
  other.restore(make("fast|step|0.9", 100).state(), 10);
  EXPECT_TRUE(other.low());
  EXPECT_EQ(other.loss_scale(), 1.0);  // the float16 scaler does not carry over to bfloat16
}

TEST(PrecisionSwitch, DamagedStatesAreCheckpointErrors) {
  PrecisionSwitch a = make("fast1|step|0.5", 100);
  nlohmann::json s = a.state();
  s["phase"] = "mixed_float16";  // not this mode's low phase
  EXPECT_THROW(make("fast1|step|0.5", 100).restore(s, 1), CheckpointError);
  s = a.state();
  s["phase"] = "original";
  s["switch_step"] = "soon";
  EXPECT_THROW(make("fast1|step|0.5", 100).restore(s, 1), CheckpointError);
  s = a.state();
  s["loss_window"] = "x";
  EXPECT_THROW(make("fast1|step|0.5", 100).restore(s, 1), CheckpointError);
}

TEST(PrecisionSwitch, BadHookTargetsAreConfigErrors) {
  EXPECT_THROW(make("fast1|step|0.5", 0), ConfigError);
  EXPECT_THROW(make("fast1|step|0.5", 10.5), ConfigError);
  EXPECT_THROW(make("fast1|loss|1.05", 0), ConfigError);
  EXPECT_THROW(make("fast1|loss|1.05", kNaN), ConfigError);
  EXPECT_THROW(make("fast1|loss|1.05", 1.0, 100, 0), ConfigError);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST(PrecisionSwitch, PhaseAndReasonNamesRoundTrip) {
  for (int i = 0; i < kNumPrecisionPhases; ++i) {
    const auto p = PrecisionPhase(i);
    EXPECT_EQ(parse_precision_phase(precision_phase_name(p)), p) << i;
  }
  EXPECT_EQ(precision_phase_name(PrecisionPhase::original), "original");
  EXPECT_EQ(precision_phase_name(PrecisionPhase::mixed_float16), "mixed_float16");
  EXPECT_EQ(parse_precision_phase("Original"), std::nullopt);
  for (int i = 0; i < kNumSwitchReasons; ++i) {
    const auto r = SwitchReason(i);
    const auto back = parse_switch_reason(switch_reason_text(r, ""));
    ASSERT_TRUE(back.has_value()) << i;
    EXPECT_EQ(back->first, r);
    EXPECT_EQ(back->second, "");
  }
  const auto d = parse_switch_reason("divergence: 5 non-finite losses in a row");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->first, SwitchReason::divergence);
  EXPECT_EQ(d->second, "5 non-finite losses in a row");
  EXPECT_EQ(parse_switch_reason("later"), std::nullopt);
}

// Checkpoints written before the phase and the reason were enums spell them the same way.
TEST(PrecisionSwitch, RestoresAnEarlierCheckpointsSwitchReason) {
  PrecisionSwitch sw = make("fast1|step|0.5", 100);
  nlohmann::json s = sw.state();
  s["phase"] = "original";
  s["switch_step"] = 7;
  s["switch_reason"] = "divergence: 5 non-finite losses in a row";
  PrecisionSwitch r = make("fast1|step|0.5", 100);
  const std::string note = r.restore(s, 9);
  ASSERT_TRUE(r.switched().has_value());
  EXPECT_EQ(r.switched()->reason, SwitchReason::divergence);
  EXPECT_EQ(r.state()["switch_reason"], "divergence: 5 non-finite losses in a row");
  EXPECT_NE(note.find("divergence: 5 non-finite losses in a row"), std::string::npos) << note;
  s.erase("switch_reason");  // no reason recorded: "resumed"
  PrecisionSwitch q = make("fast1|step|0.5", 100);
  q.restore(s, 9);
  EXPECT_EQ(q.switched()->reason, SwitchReason::resumed);
  s["switch_reason"] = "whim";
  EXPECT_THROW(make("fast1|step|0.5", 100).restore(s, 9), CheckpointError);
}

}  // namespace
}  // namespace kiln
