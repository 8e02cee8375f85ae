// The optimizer options of `kiln train`: which optimizer, its learning rate and schedule,
// its hyper-parameters and gradient clipping. Options not given keep the model's recipe
// (default_optimizer in models.h), so `--model X` alone trains X as it is meant to.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "kiln/train/optimizer.h"

namespace kiln::cli {

class OptimizerOptions {
 public:
  void add_to(CLI::App& cmd);
  // The model's recipe with the given options applied; a cosine schedule without
  // --decay-steps decays to `steps` (the run's --steps), and a recipe's warm-up that
  // would not end before the decay does shrinks to a tenth of it. validate()d.
  OptimizerSettings resolve(const OptimizerSettings& recipe, int64_t steps) const;

 private:
  std::optional<std::string> name_, schedule_;
  std::optional<double> learning_rate_, final_learning_rate_, momentum_, beta1_, beta2_, epsilon_, weight_decay_,
      clip_norm_;
  std::optional<int64_t> warmup_steps_, decay_steps_;
};

}  // namespace kiln::cli
