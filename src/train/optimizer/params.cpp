#include "kiln/train/optimizer_params.h"

#include <charconv>
#include <cmath>
#include <string>

#include "kiln/base/error.h"

namespace kiln {
namespace {

constexpr double kMostSteps = 1e15;  // params hold doubles: whole numbers are exact far beyond this

// A step count from params, exact: a whole number from 0 to kMostSteps, else an error
// that shows the value as given (4611686018427387904, not 4.61169e+18).
int64_t whole(const Params& p, const std::string& key, int64_t fallback) {
  if (!p.has(key)) return fallback;
  const double v = p.number(key);
  if (!(v >= 0) || v != std::floor(v) || v > kMostSteps) {
    char text[400];
    const bool integral = std::isfinite(v) && v == std::floor(v);
    const auto end = integral ? std::to_chars(text, text + sizeof text, v, std::chars_format::fixed).ptr
                              : std::to_chars(text, text + sizeof text, v).ptr;
    KILN_THROW(ConfigError) << "[" << key << "] '" << std::string(text, end)
                            << "' is not a whole number of steps from 0 to 1000000000000000";
  }
  return static_cast<int64_t>(v);
}

}  // namespace

OptimizerSettings optimizer_settings(const Params& p, OptimizerSettings s) {
  s.name = p.text_or("optimizer", s.name);
  s.learning_rate = p.number_or("learning_rate", s.learning_rate);
  if (p.has("learning_rate_schedule")) s.schedule.kind = parse_learning_rate_schedule(p.text("learning_rate_schedule"));
  s.schedule.warmup_steps = whole(p, "warmup_steps", s.schedule.warmup_steps);
  s.schedule.decay_steps = whole(p, "decay_steps", s.schedule.decay_steps);
  s.schedule.final_rate = p.number_or("final_learning_rate", s.schedule.final_rate);
  s.momentum = p.number_or("momentum", s.momentum);
  s.beta1 = p.number_or("beta1", s.beta1);
  s.beta2 = p.number_or("beta2", s.beta2);
  s.epsilon = p.number_or("epsilon", s.epsilon);
  s.weight_decay = p.number_or("weight_decay", s.weight_decay);
  s.clip_norm = p.number_or("clip_norm", s.clip_norm);
  s.validate();
  return s;
}

void set_optimizer_params(Params& p, const OptimizerSettings& s) {
  p.set("optimizer", s.name)
      .set("learning_rate", s.learning_rate)
      .set("learning_rate_schedule", learning_rate_schedule_name(s.schedule.kind))
      .set("warmup_steps", double(s.schedule.warmup_steps))
      .set("decay_steps", double(s.schedule.decay_steps))
      .set("final_learning_rate", s.schedule.final_rate)
      .set("momentum", s.momentum)
      .set("beta1", s.beta1)
      .set("beta2", s.beta2)
      .set("epsilon", s.epsilon)
      .set("weight_decay", s.weight_decay)
      .set("clip_norm", s.clip_norm);
}

}  // namespace kiln
