#include "train/accelerate/accelerated_step.h"

#include <limits>
#include <ostream>

#include "kiln/train/optimizer.h"

namespace kiln {
namespace {

// The switch of an earlier train() call goes on only when nothing was restored since and
// the mode is the same; otherwise a new one starts from the checkpoint's state (or none).
PrecisionSwitch& continue_or_start(Estimator::State& s, const AcceleratedStep::Setup& setup,
                                   const ExperimentalConfig& x, std::ostream* log) {
  if (!setup.restored && s.precision_switch && s.precision_switch->mode() == setup.mode) return *s.precision_switch;
  const int64_t total = setup.tell.total_step() > 0 ? setup.tell.total_step() : setup.max_steps;
  s.precision_switch = std::make_unique<PrecisionSwitch>(PrecisionSwitchOptions{
      setup.mode, setup.tell.target(), total, x.accelerate_loss_window, x.accelerate_max_low_share});
  const std::string note =
      s.precision_switch->restore(setup.restored ? setup.restored->state : nlohmann::json(), setup.start_step);
  if (log && setup.start_step > 0) *log << "accelerate_train_mode: " << note << "\n";
  return *s.precision_switch;
}

}  // namespace

AcceleratedStep::AcceleratedStep(Estimator::State& s, const Setup& setup, const ExperimentalConfig& x,
                                 const EstimatorOptions& options, AccelerateStats& stats)
    : sw_(continue_or_start(s, setup, x, options.log)),
      tell_(setup.tell),
      low_(setup.low),
      original_(setup.original),
      options_(options),
      stats_(stats),
      last_phase_(sw_.phase()) {
  stats_.mode = setup.mode.to_string();
  stats_.low_phase = sw_.low_phase();
  stats_.requested_switch_step = sw_.planned_switch_step();
  stats_.loss_target = setup.mode.split == AccelerateTrainMode::Split::loss
                           ? sw_.loss_target()
                           : std::numeric_limits<double>::quiet_NaN();
}

nlohmann::json AcceleratedStep::state() const { return sw_.state(); }

void AcceleratedStep::announce(int64_t step, double loss, double window_mean) {
  const PrecisionSwitch::Switch& sw = *sw_.switched();
  PrecisionSwitchEvent e{step, sw_.planned_switch_step(), sw.reason, sw.detail, loss, window_mean,
                         now_seconds() - loop_start_, stats_.low_phase};
  stats_.event = e;
  if (options_.on_precision_switch) {
    options_.on_precision_switch(e);
  } else if (options_.log) {
    *options_.log << "accelerate_train_mode: switched from " << precision_phase_name(e.low_phase)
                  << " to the original precision at step " << e.step << " (requested " << e.requested_step
                  << ", reason " << e.reason_text() << "), " << e.seconds
                  << " s into training, last low-precision loss " << e.loss << "\n";
  }
}

Executable& AcceleratedStep::before_step(int64_t step, double last_loss, Feeds& feeds) {
  // The switch is asked before every step, so a loop that straddles the switch step is
  // split exactly there.
  if (sw_.before_step(step)) announce(step, last_loss, sw_.window_mean());
  low_step_ = sw_.low();
  if (!low_step_) {
    feeds.erase(kLossScaleName);
    return original_;
  }
  feeds[kLossScaleName] = Array::scalar(DType::f32, sw_.loss_scale());
  return low_;
}

bool AcceleratedStep::after_step(int64_t step_reached, const Fetches& values, double loss, double seconds) {
  last_phase_ = low_step_ ? stats_.low_phase : PrecisionPhase::original;
  if (!low_step_) {
    ++stats_.original_steps;
    stats_.original_seconds += seconds;
    return false;
  }
  ++stats_.low_steps;
  stats_.low_seconds += seconds;
  const bool skipped = values.at(kGradsFiniteName).item() == 0;
  stats_.skipped_updates += skipped;
  const bool by_loss = tell_.kind() == TellMeStepOrLossHook::Kind::loss;
  const double watched = by_loss ? values.at(tell_.name()).item() : loss;
  const double mean_before = sw_.window_mean();
  if (sw_.after_low_step(step_reached, watched, !skipped))
    announce(step_reached, loss, sw_.switched()->reason == SwitchReason::loss ? sw_.window_mean() : mean_before);
  return skipped;
}

void AcceleratedStep::finish() {
  stats_.loss_scale = sw_.loss_scale();
  if (sw_.switched()) {
    stats_.switch_step = sw_.switched()->step;
    stats_.switch_reason = sw_.switched()->reason;
    stats_.switch_detail = sw_.switched()->detail;
  }
}

}  // namespace kiln
