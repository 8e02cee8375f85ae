// OptimizerSettings: checking and describing a choice of optimizer.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "kiln/base/error.h"
#include "kiln/train/optimizer.h"

namespace kiln {
namespace {

void check_fraction(const char* field, double v) {
  if (!(v >= 0 && v < 1)) KILN_THROW(ConfigError) << "[" << field << "] '" << v << "' must be a number in [0, 1)";
}

}  // namespace

OptimizerSettings OptimizerSettings::of(const std::string& name, double learning_rate) {
  OptimizerSettings s;
  s.name = name;
  s.learning_rate = learning_rate;
  if (name == "adamw") s.weight_decay = 0.01;
  return s;
}

void OptimizerSettings::validate() const {
  const std::vector<std::string> names = optimizer_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    KILN_THROW(ConfigError) << "[optimizer] unknown optimizer '" << name << "'; valid: sgd, momentum, adam, adamw";
  schedule.validate(learning_rate);
  check_fraction("momentum", momentum);
  check_fraction("beta1", beta1);
  check_fraction("beta2", beta2);
  if (!(epsilon > 0) || !std::isfinite(epsilon))
    KILN_THROW(ConfigError) << "[epsilon] '" << epsilon << "' must be a positive number";
  if (!(weight_decay >= 0) || !std::isfinite(weight_decay))
    KILN_THROW(ConfigError) << "[weight_decay] '" << weight_decay << "' must be 0 or a positive number";
  if (weight_decay > 0 && name != "adamw")
    KILN_THROW(ConfigError) << "[weight_decay] decoupled weight decay is AdamW's; optimizer '" << name
                            << "' has none: use optimizer adamw, or weight decay 0";
  if (!(clip_norm >= 0) || !std::isfinite(clip_norm))
    KILN_THROW(ConfigError) << "[clip_norm] '" << clip_norm << "' must be 0 (no clipping) or a positive number";
}

std::string OptimizerSettings::describe() const {
  std::ostringstream out;
  out << name << " lr " << learning_rate;
  if (!schedule.is_constant()) out << " (" << schedule.describe(learning_rate) << ")";
  if (name == "momentum") out << ", momentum " << momentum;
  if (name == "adamw") out << ", weight decay " << weight_decay;
  if (uses_adam_moments()) out << ", betas " << beta1 << "/" << beta2;
  if (clip_norm > 0) out << ", clip " << clip_norm;
  return out.str();
}

}  // namespace kiln
