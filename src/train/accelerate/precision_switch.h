// The precision switch of accelerate_train_mode (docs/accelerate.md): decides, step by step, whether
// the next training step runs the low-precision executable or the original-precision one.
// The Estimator owns one per accelerated train() call and asks it before every step; both
// executables share the float32 variables and optimizer slots, so switching is choosing
// the other executable for the next step.
//
// Low phase first; one switch, never back. When it switches:
//   step split   the first original-precision step is exactly floor(ratio * total_step)
//                (0-based global step), whatever iterations_per_loop is;
//   loss split   after a low step that leaves the mean of the last `loss_window` finite
//                losses <= ratio * final_loss (the window must be full; non-finite
//                losses are ignored); or at the cap, step floor(max_low_share * max_steps);
//   divergence   `kDivergenceSteps` non-finite losses in a row, or a collapsed loss scale:
//                early, from the last good state (the low graph skipped those updates).
// float16 (`fast`) runs the low phase with dynamic loss scaling; bfloat16 (`fast1`) with
// the update guard alone (scale 1).
//
// state()/restore() carry the phase, the mode, the switch and the scaler through
// checkpoints, so a resumed run continues in the right phase.
#pragma once
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kiln/train/config.h"
#include "kiln/train/estimator.h"
#include "train/accelerate/loss_scaler.h"

namespace kiln {

struct PrecisionSwitchOptions {
  AccelerateTrainMode mode;
  double hook_target = 0;      // total_step (step split) or final_loss (loss split)
  int64_t max_steps = 0;       // train()'s global step to reach
  int64_t loss_window = 20;    // ExperimentalConfig::accelerate_loss_window
  double max_low_share = 0.95; // ExperimentalConfig::accelerate_max_low_share
};

class PrecisionSwitch {
 public:
  static constexpr int64_t kDivergenceSteps = 5;

  // ConfigError for a hook target that cannot work (total_step < 1, final_loss not > 0).
  explicit PrecisionSwitch(PrecisionSwitchOptions opts);

  bool low() const { return low_; }
  // The mode's low phase until the switch, original after it.
  PrecisionPhase phase() const { return low_ ? low_phase() : PrecisionPhase::original; }
  // mixed_float16 for "fast", mixed_bfloat16 for "fast1".
  PrecisionPhase low_phase() const;
  const AccelerateTrainMode& mode() const { return opts_.mode; }
  // Step split: floor(ratio * total_step). Loss split: the cap, floor(share * max_steps).
  int64_t planned_switch_step() const { return planned_; }
  double loss_target() const;  // loss split: ratio * final_loss

  // Before the step starting at 0-based global step `step`. True if the switch happens
  // now (the planned step or the cap is reached): this step runs in the original precision.
  bool before_step(int64_t step);
  // After a low-phase step that reached global step `step_reached`, with its loss (the
  // value the hook names, for a loss split) and whether its gradients were finite. True if
  // the switch happens now (loss target met or divergence): the next step runs original.
  bool after_low_step(int64_t step_reached, double loss, bool grads_finite);
  // The same for a step whose loss is not known (a step split in sess.run mode, where the
  // script tells no LOSS_NOW): the loss scaler moves, and a collapsed scale still switches.
  bool after_low_step_unseen_loss(int64_t step_reached, bool grads_finite);

  double loss_scale() const { return scaler_.scale(); }
  const LossScaler& scaler() const { return scaler_; }
  // Mean of the loss window (NaN while empty).
  double window_mean() const;

  struct Switch {
    int64_t step = 0;          // the first original-precision step (0-based global step)
    SwitchReason reason = SwitchReason::step;
    std::string detail;        // divergence: what diverged
    std::string reason_text() const { return switch_reason_text(reason, detail); }
  };
  const std::optional<Switch>& switched() const { return switched_; }

  // For checkpoints: {"phase", "accelerate_train_mode", "switch_step", "switch_reason",
  // "planned_switch_step", "loss_scaler", "loss_window"}; the phase and the reason spelled
  // by precision_phase_name and switch_reason_text.
  nlohmann::json state() const;
  // Continues from a checkpoint's state. A state from a run without accelerate_train_mode
  // (or with another mode) only fixes the step; a state that had switched stays switched.
  // Returns a line for the log describing what was restored.
  std::string restore(const nlohmann::json& state, int64_t step);

 private:
  void switch_now(int64_t step, SwitchReason reason, std::string detail = {});
  bool switched_for_collapse(int64_t step_reached);
  PrecisionSwitchOptions opts_;
  int64_t planned_ = 0;
  bool low_ = true;
  LossScaler scaler_;
  std::deque<double> window_;
  int64_t nonfinite_run_ = 0;
  std::optional<Switch> switched_;
};

}  // namespace kiln
