// The records every sink gets (the summary file, `kiln train --metrics-out`), built once.
#include <cmath>
#include <limits>

#include "kiln/train/summary.h"

namespace kiln {

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

nlohmann::json progress_record(int64_t step, double mean_loss, double steps_per_second, double elapsed_seconds,
                               PrecisionPhase phase, std::optional<double> learning_rate) {
  nlohmann::json r = {{"event", "progress"},
                      {"step", step},
                      {"loss", number_or_null(mean_loss)},
                      {"steps_per_second", steps_per_second},
                      {"elapsed_seconds", elapsed_seconds},
                      {"phase", precision_phase_name(phase)}};
  if (learning_rate) r["learning_rate"] = *learning_rate;
  return r;
}

nlohmann::json precision_switch_record(const PrecisionSwitchEvent& e, double seconds) {
  return {{"event", "precision_switch"},
          {"step", e.step},
          {"requested_step", e.requested_step},
          {"reason", e.reason_text()},
          {"loss", number_or_null(e.loss)},
          {"window_mean", number_or_null(e.window_mean)},
          {"seconds", seconds},
          {"from", precision_phase_name(e.low_phase)}};
}

double seconds_saved(const AccelerateStats& a) {
  const double orig = a.original_steps_per_second(), low = a.low_steps_per_second();
  if (!(orig > 0) || !(low > 0)) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(a.low_steps) / orig - a.low_seconds;
}

nlohmann::json accelerate_record(const AccelerateStats& a) {
  return {{"mode", a.mode},
          {"low_phase", precision_phase_name(a.low_phase)},
          {"switch_step", a.switch_step ? nlohmann::json(*a.switch_step) : nlohmann::json()},
          {"requested_switch_step", a.requested_switch_step},
          {"switch_reason", a.switch_step ? switch_reason_text(a.switch_reason, a.switch_detail) : std::string()},
          {"loss_target", number_or_null(a.loss_target)},
          {"low_steps", a.low_steps},
          {"low_seconds", a.low_seconds},
          {"low_steps_per_second", a.low_steps_per_second()},
          {"original_steps", a.original_steps},
          {"original_seconds", a.original_seconds},
          {"original_steps_per_second", a.original_steps_per_second()},
          {"skipped_updates", a.skipped_updates},
          {"loss_scale", a.loss_scale},
          {"seconds_saved", number_or_null(seconds_saved(a))}};
}

nlohmann::json compile_record(const CompileSummary& c) {
  return {{"cache", cache_outcome_name(c.cache())},
          {"graphs", c.graphs},
          {"cache_hits", c.cache_hits},
          {"cache_misses", c.cache_misses},
          {"remote_hits", c.remote_hits},
          {"received", c.received},
          {"compiled", c.compiled()},
          {"seconds", c.passes_seconds + c.codegen_seconds + c.compile_seconds + c.load_seconds},
          {"passes_seconds", c.passes_seconds},
          {"codegen_seconds", c.codegen_seconds},
          {"cxx_seconds", c.compile_seconds},
          {"load_seconds", c.load_seconds}};
}

nlohmann::json config_record(const RunConfig& config) {
  return {{"precision_mode", config.precision_mode},
          {"precision_mode_v2", config.precision_mode_v2},
          {"accelerate_train_mode", config.experimental_config.accelerate_train_mode},
          {"iterations_per_loop", config.iterations_per_loop}};
}

nlohmann::json eval_record(const Evaluation& ev) {
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [name, value] : ev.metrics) metrics[name] = number_or_null(value);
  return {{"event", "eval"},
          {"step", ev.global_step},
          {"metrics", metrics},
          {"examples", ev.examples},
          {"seconds", ev.seconds - ev.compile_seconds},
          {"compile_seconds", ev.compile_seconds}};
}

}  // namespace kiln
