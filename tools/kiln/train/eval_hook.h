// `kiln train --eval-every N`: evaluates on the test set from inside the one train() call,
// after the loop that reaches each multiple of N (before the last step: the final
// evaluation follows training). Training is not cut into several train() calls, so no
// checkpoint is written for an evaluation; only --save-checkpoints-steps and the end do.
#pragma once
#include <atomic>
#include <functional>

#include "kiln/train/estimator.h"

namespace kiln::cli {

class EvalHook : public Hook {
 public:
  // `est` is the Estimator whose train() runs this hook; `on_eval` gets each evaluation.
  // No evaluation once `interrupt` is set: the run stops after this loop.
  EvalHook(Estimator& est, InputFn test_input, int64_t every, const std::atomic<bool>* interrupt,
           std::function<void(int64_t step, const Evaluation&)> on_eval)
      : est_(est), input_(std::move(test_input)), every_(every), interrupt_(interrupt), on_eval_(std::move(on_eval)) {}

  void after_run(RunContext& ctx, const RunValues& v) override;

  // Wall time spent evaluating (and reporting) inside train()'s step loop: the caller
  // takes it out of the loop's time.
  double seconds() const { return seconds_; }

 private:
  Estimator& est_;
  InputFn input_;
  int64_t every_;
  const std::atomic<bool>* interrupt_;
  std::function<void(int64_t, const Evaluation&)> on_eval_;
  double seconds_ = 0;
};

}  // namespace kiln::cli
