// A model_fn's params (TensorFlow's `params` dict) as OptimizerSettings, so every model
// takes the same optimizer, schedule and clipping settings under the same names:
//   "optimizer" (text), "learning_rate", "learning_rate_schedule" (text), "warmup_steps",
//   "decay_steps", "final_learning_rate", "momentum", "beta1", "beta2", "epsilon",
//   "weight_decay", "clip_norm" (numbers; the step counts whole).
#pragma once
#include "kiln/train/estimator.h"
#include "kiln/train/optimizer.h"

namespace kiln {

// `defaults` with every key present in params applied; ConfigError "[<key>] ..." for a
// value of the wrong kind or out of range (validate()d).
OptimizerSettings optimizer_settings(const Params& params, OptimizerSettings defaults = {});
// The settings as params entries (every key above), for Estimator's params.
void set_optimizer_params(Params& params, const OptimizerSettings& settings);

}  // namespace kiln
