#include "kiln/optimizer_params.h"

#include <cmath>

#include "kiln/error.h"

namespace kiln {
namespace {

int64_t whole(const Params& p, const std::string& key, int64_t fallback) {
  if (!p.has(key)) return fallback;
  const double v = p.number(key);
  if (!(v >= 0) || v != std::floor(v) || v > 1e15)
    KILN_THROW(ConfigError) << "[" << key << "] '" << v << "' must be a whole number of steps, 0 or more";
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
