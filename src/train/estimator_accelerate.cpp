// accelerate_train_mode's requirements on train()'s hooks.
#include <sstream>

#include "kiln/base/error.h"
#include "train/estimator_state.h"

namespace kiln {

namespace {

std::string how_to_add(const AccelerateTrainMode& mode) {
  return mode.split == AccelerateTrainMode::Split::step
             ? "add `std::make_shared<kiln::TellMeStepOrLossHook>(\"global_step\", total_step)` to train()'s hooks"
             : "add `kiln::TellMeStepOrLossHook::loss(\"loss\", final_loss)` to train()'s hooks";
}

}  // namespace

const TellMeStepOrLossHook& accelerate_hook(const HookList& hooks, const AccelerateTrainMode& mode) {
  const auto want = mode.split == AccelerateTrainMode::Split::step ? TellMeStepOrLossHook::Kind::step
                                                                   : TellMeStepOrLossHook::Kind::loss;
  const TellMeStepOrLossHook* found = nullptr;
  int count = 0;
  for (const auto& h : hooks)
    if (const auto* t = dynamic_cast<const TellMeStepOrLossHook*>(h.get())) {
      found = t;
      ++count;
    }
  const std::string head = "[accelerate_train_mode] '" + mode.to_string() + "' ";
  if (count == 0)
    KILN_THROW(ConfigError) << head << "needs a TellMeStepOrLossHook to know where training is ("
                            << (want == TellMeStepOrLossHook::Kind::step ? "the step and the total" : "the loss")
                            << "): " << how_to_add(mode);
  if (count > 1) KILN_THROW(ConfigError) << head << "got " << count << " TellMeStepOrLossHooks; pass exactly one";
  if (found->kind() != want)
    KILN_THROW(ConfigError) << head << "splits by " << split_name(mode.split)
                            << ", but the TellMeStepOrLossHook reports the "
                            << (found->kind() == TellMeStepOrLossHook::Kind::step ? "step" : "loss") << " ('"
                            << found->name() << "'): " << how_to_add(mode);
  return *found;
}

}  // namespace kiln
