#include "train/accelerate/precision_switch.h"

#include <array>
#include <cmath>
#include <limits>
#include <sstream>

#include "kiln/train/checkpoint.h"
#include "kiln/base/error.h"

namespace kiln {

using Split = AccelerateTrainMode::Split;

namespace {

// One name per enumerator, in declaration order.
constexpr std::array<std::string_view, kNumPrecisionPhases> kPhaseNames = {"original", "mixed_float16",
                                                                           "mixed_bfloat16"};
constexpr std::array<std::string_view, kNumSwitchReasons> kReasonNames = {"step", "loss", "cap", "divergence",
                                                                          "resumed"};
static_assert(int(PrecisionPhase::mixed_bfloat16) + 1 == kNumPrecisionPhases);
static_assert(int(SwitchReason::resumed) + 1 == kNumSwitchReasons);

// floor(share * steps) for a share in (0, 1].
int64_t share_of(double share, int64_t steps) {
  return static_cast<int64_t>(std::floor(share * static_cast<double>(steps) + 1e-9));
}

}  // namespace

std::string_view precision_phase_name(PrecisionPhase p) {
  KILN_CHECK(int(p) < kNumPrecisionPhases) << "bad PrecisionPhase " << int(p);
  return kPhaseNames[size_t(p)];
}

std::optional<PrecisionPhase> parse_precision_phase(std::string_view text) {
  for (size_t i = 0; i < kPhaseNames.size(); ++i)
    if (kPhaseNames[i] == text) return PrecisionPhase(i);
  return std::nullopt;
}

std::string_view switch_reason_name(SwitchReason r) {
  KILN_CHECK(int(r) < kNumSwitchReasons) << "bad SwitchReason " << int(r);
  return kReasonNames[size_t(r)];
}

std::string switch_reason_text(SwitchReason r, std::string_view detail) {
  std::string text(switch_reason_name(r));
  if (!detail.empty()) text.append(": ").append(detail);
  return text;
}

std::optional<std::pair<SwitchReason, std::string>> parse_switch_reason(std::string_view text) {
  const size_t colon = text.find(": ");
  const std::string_view name = text.substr(0, colon);
  for (size_t i = 0; i < kReasonNames.size(); ++i)
    if (kReasonNames[i] == name)
      return std::pair{SwitchReason(i), colon == std::string_view::npos ? std::string() : std::string(text.substr(colon + 2))};
  return std::nullopt;
}

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

PrecisionPhase PrecisionSwitch::low_phase() const {
  return opts_.mode.type == AccelerateTrainMode::LowType::float16 ? PrecisionPhase::mixed_float16
                                                                  : PrecisionPhase::mixed_bfloat16;
}

double PrecisionSwitch::loss_target() const { return opts_.mode.loss_target(opts_.hook_target); }

double PrecisionSwitch::window_mean() const {
  if (window_.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double l : window_) sum += l;
  return sum / static_cast<double>(window_.size());
}

void PrecisionSwitch::switch_now(int64_t step, SwitchReason reason, std::string detail) {
  if (!low_) return;
  low_ = false;
  scaler_.disable();
  switched_ = Switch{step, reason, std::move(detail)};
}

bool PrecisionSwitch::before_step(int64_t step) {
  if (!low_ || step < planned_) return false;
  switch_now(step, opts_.mode.split == Split::step ? SwitchReason::step : SwitchReason::cap);
  return true;
}

bool PrecisionSwitch::after_low_step(int64_t step_reached, double loss, bool grads_finite) {
  if (!low_) return false;
  scaler_.update(grads_finite);
  const bool finite = std::isfinite(loss);
  nonfinite_run_ = finite ? 0 : nonfinite_run_ + 1;
  if (nonfinite_run_ >= kDivergenceSteps) {
    switch_now(step_reached, SwitchReason::divergence,
               std::to_string(nonfinite_run_) + " non-finite losses in a row");
    return true;
  }
  if (switched_for_collapse(step_reached)) return true;
  if (opts_.mode.split != Split::loss || !finite) return false;
  window_.push_back(loss);
  if (static_cast<int64_t>(window_.size()) > opts_.loss_window) window_.pop_front();
  if (static_cast<int64_t>(window_.size()) == opts_.loss_window && window_mean() <= loss_target()) {
    switch_now(step_reached, SwitchReason::loss);
    return true;
  }
  return false;
}

bool PrecisionSwitch::after_low_step_unseen_loss(int64_t step_reached, bool grads_finite) {
  if (!low_) return false;
  scaler_.update(grads_finite);
  return switched_for_collapse(step_reached);
}

bool PrecisionSwitch::switched_for_collapse(int64_t step_reached) {
  if (!scaler_.collapsed()) return false;
  std::ostringstream why;
  why << "the loss scale fell to " << scaler_.scale() << ", below the floor " << LossScaler::kFloor;
  switch_now(step_reached, SwitchReason::divergence, why.str());
  return true;
}

nlohmann::json PrecisionSwitch::state() const {
  nlohmann::json j{{"phase", precision_phase_name(phase())},
                   {"accelerate_train_mode", opts_.mode.to_string()},
                   {"planned_switch_step", planned_},
                   {"loss_scaler", scaler_.to_json()},
                   {"loss_window", window_}};
  if (switched_) {
    j["switch_step"] = switched_->step;
    j["switch_reason"] = switched_->reason_text();
  } else {
    j["switch_step"] = nullptr;
  }
  return j;
}

namespace {
// A string field of a checkpoint's state; "" when absent; nullopt when of another type
// (a hand-edited checkpoint can hold anything its checksum was recomputed for).
std::optional<std::string> state_string(const nlohmann::json& state, const char* key) {
  if (!state.is_object() || !state.contains(key)) return std::string();
  if (!state[key].is_string()) return std::nullopt;
  return state[key].get<std::string>();
}
}  // namespace

std::string PrecisionSwitch::restore(const nlohmann::json& state, int64_t step) {
  const std::string mode_now = opts_.mode.to_string();
  auto bad = [&](const char* field) {
    return CheckpointError("[checkpoint] the accelerate_train_mode state has a missing or invalid '" +
                           std::string(field) + "': " + state.dump());
  };
  const std::optional<std::string> saved_mode = state_string(state, "accelerate_train_mode");
  const std::optional<std::string> saved_phase_name = state_string(state, "phase");
  if (!saved_mode) throw bad("accelerate_train_mode");
  if (!saved_phase_name) throw bad("phase");
  if (*saved_mode != mode_now) {
    // A run under another accelerate_train_mode that had switched already: the switch is
    // one way, whatever the new mode would plan.
    if (!saved_mode->empty() && *saved_phase_name == precision_phase_name(PrecisionPhase::original)) {
      const auto& s = state.contains("switch_step") ? state["switch_step"] : nlohmann::json();
      if (!s.is_number_integer()) throw bad("switch_step");
      switch_now(s.get<int64_t>(), SwitchReason::resumed, "switched under '" + *saved_mode + "'");
      return "checkpoint from a run with '" + *saved_mode + "' that had switched to the original precision at step " +
             std::to_string(switched_->step) + ": continuing at step " + std::to_string(step) +
             " in phase original (the switch is one way)";
    }
    // A plain run's checkpoint, or another mode's still in its low phase: the step decides.
    before_step(step);
    return "checkpoint from a run " +
           (saved_mode->empty() ? std::string("without accelerate_train_mode") : "with '" + *saved_mode + "'") +
           ": continuing at step " + std::to_string(step) + " in phase " + std::string(precision_phase_name(phase()));
  }
  const std::optional<PrecisionPhase> saved_phase = parse_precision_phase(*saved_phase_name);
  if (!saved_phase || (saved_phase != PrecisionPhase::original && saved_phase != low_phase())) throw bad("phase");
  if (state.contains("loss_scaler")) scaler_ = LossScaler::from_json(state["loss_scaler"]);
  if (state.contains("loss_window")) {
    if (!state["loss_window"].is_array()) throw bad("loss_window");
    for (const auto& v : state["loss_window"]) {
      if (!v.is_number()) throw bad("loss_window");
      window_.push_back(v.get<double>());
    }
    while (static_cast<int64_t>(window_.size()) > opts_.loss_window) window_.pop_front();
  }
  if (saved_phase == PrecisionPhase::original) {
    const auto& s = state.contains("switch_step") ? state["switch_step"] : nlohmann::json();
    if (!s.is_number_integer()) throw bad("switch_step");
    const std::optional<std::string> reason_text = state_string(state, "switch_reason");
    if (!reason_text) throw bad("switch_reason");
    const auto reason = parse_switch_reason(reason_text->empty() ? "resumed" : *reason_text);
    if (!reason) throw bad("switch_reason");
    switch_now(s.get<int64_t>(), reason->first, reason->second);
    return "resumed in phase original (switched at step " + std::to_string(switched_->step) + ", " +
           switched_->reason_text() + ")";
  }
  if (before_step(step)) return "resumed at step " + std::to_string(step) + ", at or past the switch step";
  std::ostringstream line;
  line << "resumed in phase " << precision_phase_name(phase()) << " at step " << step;
  if (scaler_.enabled()) line << " (loss scale " << scaler_.scale() << ")";
  return line.str();
}

}  // namespace kiln
