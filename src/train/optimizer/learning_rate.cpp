#include "kiln/train/learning_rate.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "kiln/base/error.h"

namespace kiln {
namespace {

constexpr double kPi = 3.14159265358979323846;

// The cosine phase's progress in [0, 1] at step t.
double cosine_progress(const LearningRateSchedule& s, double t) {
  return std::clamp((t - double(s.warmup_steps)) / double(s.decay_steps - s.warmup_steps), 0.0, 1.0);
}

}  // namespace

std::vector<std::string> learning_rate_schedule_names() { return {"constant", "cosine"}; }

LearningRateSchedule::Kind parse_learning_rate_schedule(const std::string& name) {
  if (name == "constant") return LearningRateSchedule::Kind::constant;
  if (name == "cosine") return LearningRateSchedule::Kind::cosine;
  KILN_THROW(ConfigError) << "[learning_rate_schedule] unknown schedule '" << name << "'; valid: constant, cosine";
}

std::string learning_rate_schedule_name(LearningRateSchedule::Kind kind) {
  return kind == LearningRateSchedule::Kind::cosine ? "cosine" : "constant";
}

void LearningRateSchedule::validate(double base) const {
  if (!(base > 0) || !std::isfinite(base))
    KILN_THROW(ConfigError) << "[learning_rate] '" << base << "' must be a positive number";
  if (warmup_steps < 0)
    KILN_THROW(ConfigError) << "[warmup_steps] '" << warmup_steps << "' must be 0 (no warm-up) or more";
  if (kind == Kind::constant) {
    if (final_rate != 0)
      KILN_THROW(ConfigError) << "[final_learning_rate] '" << final_rate
                              << "' applies to the cosine schedule only; the schedule is constant";
    return;
  }
  if (decay_steps <= warmup_steps)
    KILN_THROW(ConfigError) << "[decay_steps] '" << decay_steps << "' must come after the end of the warm-up (step "
                            << warmup_steps << "): the cosine decay runs from there to this step";
  if (!(final_rate >= 0) || !(final_rate <= base))
    KILN_THROW(ConfigError) << "[final_learning_rate] '" << final_rate << "' must be between 0 and the learning rate "
                            << base;
}

std::string LearningRateSchedule::describe(double base) const {
  std::ostringstream out;
  out << learning_rate_schedule_name(kind);
  if (kind == Kind::cosine) out << " " << base << " to " << final_rate << " at step " << decay_steps;
  if (warmup_steps > 0) out << ", warm-up " << warmup_steps << " steps";
  return out.str();
}

double learning_rate_at(double base, const LearningRateSchedule& s, int64_t step) {
  if (step < s.warmup_steps) return base * double(step + 1) / double(s.warmup_steps);
  if (s.kind == LearningRateSchedule::Kind::constant) return base;
  return s.final_rate + (base - s.final_rate) * 0.5 * (1.0 + std::cos(kPi * cosine_progress(s, double(step))));
}

Tensor learning_rate(Graph& g, double base, const LearningRateSchedule& s) {
  s.validate(base);
  // The settings' values are hyperparameters (kiln/ir/ops.h): another base rate, run length
  // or warm-up length loads the same compiled step. Whether there is a warm-up or a
  // decay at all is the graph's structure.
  auto h = [&](double v) { return hyperparameter(g, v); };
  if (s.is_constant()) return h(base);
  const Tensor t = cast(global_step(g), DType::f32);
  Tensor rate = h(base);
  const Tensor warmup = h(double(s.warmup_steps));
  if (s.kind == LearningRateSchedule::Kind::cosine) {
    const Tensor span = h(double(s.decay_steps - s.warmup_steps));
    const Tensor p = minimum(maximum((t - warmup) / span, constant(g, 0.0)), constant(g, 1.0));
    rate = (cos(p * kPi) + 1.0) * h(0.5 * (base - s.final_rate)) + h(s.final_rate);
  }
  if (s.warmup_steps > 0) rate = select(less(t, warmup), (t + 1.0) * h(base / double(s.warmup_steps)), rate);
  return rate;
}

}  // namespace kiln
