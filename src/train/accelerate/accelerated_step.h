// accelerate_train_mode's part of each training step (docs/accelerate.md): which executable runs
// the step, the loss scale it is fed, what its outcome tells the precision switch, and
// the announcement when the switch happens. Estimator::train owns one per accelerated
// call and asks it before and after every step; the loop itself knows nothing of phases.
#pragma once
#include <cstdint>
#include <optional>

#include "kiln/train/checkpoint.h"
#include "kiln/train/estimator.h"
#include "train/estimator_state.h"

namespace kiln {

class AcceleratedStep {
 public:
  struct Setup {
    const AccelerateTrainMode& mode;
    const TellMeStepOrLossHook& tell;   // train()'s hook of the mode's split
    Executable& low;                    // the guarded low-precision executable
    Executable& original;               // the original-precision one
    int64_t max_steps = 0;              // train()'s
    int64_t start_step = 0;             // the global step this call starts at
    const Checkpoint* restored = nullptr;  // the checkpoint this call resumed from, if any
  };

  // Continues the switch kept in `s` (a second train() call with the same mode and no
  // checkpoint in between) or starts one, restoring its state from `restored`; logs
  // what was restored when the call does not start at step 0. Fills `stats`'s plan.
  AcceleratedStep(Estimator::State& s, const Setup& setup, const ExperimentalConfig& x,
                  const EstimatorOptions& options, AccelerateStats& stats);

  // The phase the next step runs in; for RunContext before the loop.
  PrecisionPhase phase() const { return sw_.phase(); }
  // What a checkpoint records besides the variables.
  nlohmann::json state() const;

  // Starts the clock the switch announcement reports its time against.
  void start(double loop_start) { loop_start_ = loop_start; }
  // Before the step starting at global step `step`, whose previous step's loss (in this
  // call) was `last_loss`: switches if the plan says so (announcing it), puts the loss
  // scale into `feeds` for a low step or removes it, and returns the executable to run.
  Executable& before_step(int64_t step, double last_loss, Feeds& feeds);
  // After that step, which reached `step_reached` with `loss` in `seconds`: counts and
  // times it, and for a low step feeds the switch the watched value and the guard's
  // verdict (which may switch). Returns whether the guard skipped the step's update.
  bool after_step(int64_t step_reached, const Fetches& values, double loss, double seconds);
  // The phase the last step ran in.
  PrecisionPhase last_phase() const { return last_phase_; }

  // At the end of the call: the loss scale and the switch into the stats.
  void finish();

 private:
  void announce(int64_t step, double loss, double window_mean);

  PrecisionSwitch& sw_;
  const TellMeStepOrLossHook& tell_;
  Executable& low_;
  Executable& original_;
  const EstimatorOptions& options_;
  AccelerateStats& stats_;
  double loop_start_ = 0;
  bool low_step_ = false;  // the step in progress runs low
  PrecisionPhase last_phase_;
};

}  // namespace kiln
