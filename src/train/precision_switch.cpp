#include "train/precision_switch.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "kiln/checkpoint.h"
#include "kiln/error.h"

namespace kiln {

using Split = AccelerateTrainMode::Split;

namespace {

// floor(share * steps) for a share in (0, 1].
int64_t share_of(double share, int64_t steps) {
  return static_cast<int64_t>(std::floor(share * static_cast<double>(steps) + 1e-9));
}

}  // namespace

PrecisionSwitch::PrecisionSwitch(PrecisionSwitchOptions opts)
    : opts_(std::move(opts)), scaler_(opts_.mode.type == AccelerateTrainMode::LowType::float16) {
  if (opts_.loss_window < 1) KILN_THROW(ConfigError) << "[accelerate_loss_window] must be >= 1";
  if (!(opts_.max_low_share > 0 && opts_.max_low_share <= 1))
    KILN_THROW(ConfigError) << "[accelerate_max_low_share] must be in (0, 1], got " << opts_.max_low_share;
  if (opts_.mode.split == Split::step) {
    const double total = opts_.hook_target;
    if (!(total >= 1) || total != std::floor(total))
      KILN_THROW(ConfigError) << "[TellMeStepOrLossHook] total_step must be a whole number >= 1, got " << total;
    planned_ = opts_.mode.switch_step(static_cast<int64_t>(total));
  } else {
    if (!(opts_.hook_target > 0) || !std::isfinite(opts_.hook_target))
      KILN_THROW(ConfigError) << "[TellMeStepOrLossHook] final_loss must be a finite number > 0, got "
                              << opts_.hook_target;
    planned_ = share_of(opts_.max_low_share, opts_.max_steps);
  }
}

std::string PrecisionSwitch::phase() const {
  if (!low_) return "original";
  return std::string(precision_policy_name(low_phase_policy(opts_.mode)));
}

double PrecisionSwitch::loss_target() const { return opts_.mode.loss_target(opts_.hook_target); }

double PrecisionSwitch::window_mean() const {
  if (window_.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double l : window_) sum += l;
  return sum / static_cast<double>(window_.size());
}

void PrecisionSwitch::switch_now(int64_t step, std::string reason) {
  if (!low_) return;
  low_ = false;
  scaler_.disable();
  switched_ = Switch{step, std::move(reason)};
}

bool PrecisionSwitch::before_step(int64_t step) {
  if (!low_ || step < planned_) return false;
  switch_now(step, opts_.mode.split == Split::step ? "step" : "cap");
  return true;
}

bool PrecisionSwitch::after_low_step(int64_t step_reached, double loss, bool grads_finite) {
  if (!low_) return false;
  scaler_.update(grads_finite);
  const bool finite = std::isfinite(loss);
  nonfinite_run_ = finite ? 0 : nonfinite_run_ + 1;
  if (nonfinite_run_ >= kDivergenceSteps) {
    switch_now(step_reached, "divergence: " + std::to_string(nonfinite_run_) + " non-finite losses in a row");
    return true;
  }
  if (scaler_.collapsed()) {
    std::ostringstream why;
    why << "divergence: the loss scale fell to " << scaler_.scale() << ", below the floor " << LossScaler::kFloor;
    switch_now(step_reached, why.str());
    return true;
  }
  if (opts_.mode.split != Split::loss || !finite) return false;
  window_.push_back(loss);
  if (static_cast<int64_t>(window_.size()) > opts_.loss_window) window_.pop_front();
  if (static_cast<int64_t>(window_.size()) == opts_.loss_window && window_mean() <= loss_target()) {
    switch_now(step_reached, "loss");
    return true;
  }
  return false;
}

nlohmann::json PrecisionSwitch::state() const {
  nlohmann::json j{{"phase", phase()},
                   {"accelerate_train_mode", opts_.mode.to_string()},
                   {"planned_switch_step", planned_},
                   {"loss_scaler", scaler_.to_json()},
                   {"loss_window", window_}};
  if (switched_) {
    j["switch_step"] = switched_->step;
    j["switch_reason"] = switched_->reason;
  } else {
    j["switch_step"] = nullptr;
  }
  return j;
}

std::string PrecisionSwitch::restore(const nlohmann::json& state, int64_t step) {
  const std::string mode_now = opts_.mode.to_string();
  const bool same_mode = state.is_object() && state.value("accelerate_train_mode", std::string()) == mode_now;
  if (!same_mode) {
    // A plain run's checkpoint, or another mode's: the step decides the phase.
    std::string from = state.is_object() ? state.value("accelerate_train_mode", std::string()) : std::string();
    before_step(step);
    return "checkpoint from a run " + (from.empty() ? std::string("without accelerate_train_mode") : "with '" + from + "'") +
           ": continuing at step " + std::to_string(step) + " in phase " + phase();
  }
  auto bad = [&](const char* field) {
    return CheckpointError("[checkpoint] the accelerate_train_mode state has a missing or invalid '" +
                           std::string(field) + "': " + state.dump());
  };
  const std::string saved_phase = state.value("phase", std::string());
  if (saved_phase != "original" && saved_phase != phase()) throw bad("phase");
  if (state.contains("loss_scaler")) scaler_ = LossScaler::from_json(state["loss_scaler"]);
  if (state.contains("loss_window")) {
    if (!state["loss_window"].is_array()) throw bad("loss_window");
    for (const auto& v : state["loss_window"]) {
      if (!v.is_number()) throw bad("loss_window");
      window_.push_back(v.get<double>());
    }
    while (static_cast<int64_t>(window_.size()) > opts_.loss_window) window_.pop_front();
  }
  if (saved_phase == "original") {
    const auto& s = state.contains("switch_step") ? state["switch_step"] : nlohmann::json();
    if (!s.is_number_integer()) throw bad("switch_step");
    switch_now(s.get<int64_t>(), state.value("switch_reason", std::string("resumed")));
    return "resumed in phase original (switched at step " + std::to_string(switched_->step) + ", " +
           switched_->reason + ")";
  }
  if (before_step(step)) return "resumed at step " + std::to_string(step) + ", at or past the switch step";
  std::ostringstream line;
  line << "resumed in phase " << phase() << " at step " << step;
  if (scaler_.enabled()) line << " (loss scale " << scaler_.scale() << ")";
  return line.str();
}

}  // namespace kiln
