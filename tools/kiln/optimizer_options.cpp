#include "optimizer_options.h"

#include "kiln/base/error.h"
#include "kiln/train/training_range.h"
#include "option_checks.h"

namespace kiln::cli {
namespace {

// An option given for an optimizer or schedule it does not apply to would do nothing.
void check_applies(bool given, bool applies, const char* option, const std::string& what) {
  if (given && !applies) KILN_THROW(ConfigError) << "[" << option << "] applies to " << what;
}

}  // namespace

void OptimizerOptions::add_to(CLI::App& cmd) {
  cmd.add_option("--optimizer", name_, "Optimizer (default: the model's; momentum for mlp and cnn)")
      ->check(CLI::IsMember(optimizer_names()));
  cmd.add_option("--learning-rate", learning_rate_, "Learning rate, the peak one with a schedule (default: the model's)")
      ->check(positive_real());
  cmd.add_option("--learning-rate-schedule", schedule_,
                 "Learning-rate schedule after the warm-up: constant, or cosine decay to --final-learning-rate at"
                 " --decay-steps")
      ->check(CLI::IsMember(learning_rate_schedule_names()));
  cmd.add_option("--warmup-steps", warmup_steps_, "Steps of linear learning-rate warm-up (0: none)")
      ->check(whole_number(0));
  cmd.add_option("--decay-steps", decay_steps_, "Cosine schedule: the step at which it reaches the final rate (default: --steps)")
      ->check(whole_number(1));
  cmd.add_option("--final-learning-rate", final_learning_rate_, "Cosine schedule: the rate it decays to (default 0)")
      ->check(nonnegative_real());
  cmd.add_option("--momentum", momentum_, "Momentum of the momentum optimizer (default 0.9)")->check(fraction());
  cmd.add_option("--beta1", beta1_, "Adam/AdamW: decay of the first moment (default 0.9)")->check(fraction());
  cmd.add_option("--beta2", beta2_, "Adam/AdamW: decay of the second moment (default 0.999)")->check(fraction());
  cmd.add_option("--epsilon", epsilon_, "Adam/AdamW: epsilon (default 1e-8)")->check(positive_real());
  cmd.add_option("--weight-decay", weight_decay_,
                 "AdamW: decoupled weight decay of weights of rank >= 2 except embeddings (default 0.01 for"
                 " adamw)")
      ->check(nonnegative_real());
  cmd.add_option("--clip-norm", clip_norm_, "Clip gradients to this global L2 norm (0: no clipping)")
      ->check(nonnegative_real());
}

OptimizerSettings OptimizerOptions::resolve(const OptimizerSettings& recipe, int64_t steps) const {
  OptimizerSettings s = recipe;
  if (name_ && *name_ != recipe.name) {
    // Another optimizer than the recipe's: its own defaults, not the recipe's tuning of
    // a different one (the schedule and clipping carry over).
    s = OptimizerSettings::of(*name_, recipe.learning_rate);
    s.schedule = recipe.schedule;
    s.clip_norm = recipe.clip_norm;
  }
  const bool adam = s.uses_adam_moments();
  const std::string which = " only; the optimizer is '" + s.name + "'";
  check_applies(momentum_.has_value(), s.name == "momentum", "--momentum", "the momentum optimizer" + which);
  check_applies(beta1_.has_value(), adam, "--beta1", "adam and adamw" + which);
  check_applies(beta2_.has_value(), adam, "--beta2", "adam and adamw" + which);
  check_applies(epsilon_.has_value(), adam, "--epsilon", "adam and adamw" + which);
  if (learning_rate_) s.learning_rate = *learning_rate_;
  if (schedule_) s.schedule.kind = parse_learning_rate_schedule(*schedule_);
  if (warmup_steps_) s.schedule.warmup_steps = *warmup_steps_;
  if (decay_steps_) s.schedule.decay_steps = *decay_steps_;
  else if (s.schedule.kind == LearningRateSchedule::Kind::cosine) s.schedule.decay_steps = steps;
  const bool cosine = s.schedule.kind == LearningRateSchedule::Kind::cosine;
  check_applies(decay_steps_.has_value(), cosine, "--decay-steps", "the cosine schedule only; the schedule is constant");
  check_applies(final_learning_rate_.has_value(), cosine, "--final-learning-rate",
                "the cosine schedule only; the schedule is constant");
  if (final_learning_rate_) s.schedule.final_rate = *final_learning_rate_;
  // A short run of a recipe with a warm-up (gpt's 100 steps, --steps 20): the recipe's
  // warm-up shrinks to a tenth of the run rather than outlast it. A warm-up the user gave
  // stays as given (and validate() says when it leaves no room for the decay).
  if (cosine && !warmup_steps_ && s.schedule.warmup_steps >= s.schedule.decay_steps)
    s.schedule.warmup_steps = s.schedule.decay_steps / 10;
  if (momentum_) s.momentum = *momentum_;
  if (beta1_) s.beta1 = *beta1_;
  if (beta2_) s.beta2 = *beta2_;
  if (epsilon_) s.epsilon = *epsilon_;
  if (weight_decay_) s.weight_decay = *weight_decay_;
  if (clip_norm_) s.clip_norm = *clip_norm_;
  s.validate();
  // The CLI's models hold float32 variables: a rate must be a normal float32 number.
  if (learning_rate_) check_positive_in(DType::f32, s.learning_rate, "--learning-rate");
  if (final_learning_rate_) check_positive_in(DType::f32, s.schedule.final_rate, "--final-learning-rate");
  return s;
}

}  // namespace kiln::cli
