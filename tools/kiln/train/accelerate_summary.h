// What `kiln train --accelerate-train-mode ...` reports at the end: the switch, steps and
// time per phase, and the time saved against the measured original-precision step rate.
// Sums the AccelerateStats of the train() calls it is given (`kiln train` makes one call
// per run; --eval-every evaluates inside it).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "kiln/train/estimator.h"

namespace kiln::cli {

class AccelerateTotals {
 public:
  void add(const AccelerateStats& a);
  // Seconds the low phase saved: its steps at the original-precision rate measured in
  // this run, minus the time they took. NaN unless both phases ran.
  double seconds_saved() const;
  // Lines for the final summary.
  std::string summary() const;
  // The "accelerate" object of the final metrics record: mode, switch_step (null if no
  // switch), requested_switch_step, switch_reason, per phase steps/seconds/steps_per_second,
  // skipped_updates, loss_scale, seconds_saved (null when unknown).
  nlohmann::json to_json() const;

 private:
  // The switch's reason as the summary and the metrics spell it; empty before a switch.
  std::string reason_text() const;
  AccelerateStats t_;
  bool any_ = false;
};

}  // namespace kiln::cli
