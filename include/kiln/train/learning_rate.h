// Learning-rate schedules, evaluated in the graph from global_step, so that a resumed run
// continues its schedule from the checkpointed step and a compiled step needs no feed.
// The schedule's numbers (base, warm-up and decay lengths, final rate) are hyperparameters
// (kiln/ir/ops.h): graphs that differ only in them share one compiled step.
//
// With warm-up W and step t (the global step before the update, 0-based):
//   t < W:           rate = base * (t + 1) / W                       (linear warm-up)
//   constant:        rate = base                                     afterwards
//   cosine:          p = min(1, (t - W) / (D - W)),
//                    rate = final + (base - final) * (1 + cos(pi p)) / 2
// so the cosine decay reaches `final_rate` at step D (decay_steps, usually the run's
// total steps) and stays there.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/ops.h"

namespace kiln {

struct LearningRateSchedule {
  enum class Kind { constant, cosine };
  Kind kind = Kind::constant;
  int64_t warmup_steps = 0;  // 0: none
  int64_t decay_steps = 0;   // cosine: the step at which the rate reaches final_rate
  double final_rate = 0;     // cosine: the rate from decay_steps on

  // The rate does not depend on the step (no warm-up, constant).
  bool is_constant() const { return kind == Kind::constant && warmup_steps == 0; }
  // ConfigError naming the setting ([warmup_steps], [decay_steps], [final_learning_rate])
  // unless the schedule is usable with `base`.
  void validate(double base) const;
  // "constant", "cosine"; "cosine 1000 steps to 0.0001, warm-up 100" for logs.
  std::string describe(double base) const;
};

std::vector<std::string> learning_rate_schedule_names();  // constant, cosine
// ConfigError listing the valid names otherwise.
LearningRateSchedule::Kind parse_learning_rate_schedule(const std::string& name);
std::string learning_rate_schedule_name(LearningRateSchedule::Kind kind);

// The rate at step t, computed in double on the host (for logs, tests and peers).
double learning_rate_at(double base, const LearningRateSchedule& s, int64_t step);
// The rate as a float32 scalar of g, from g's global_step (created if missing).
Tensor learning_rate(Graph& g, double base, const LearningRateSchedule& s);

}  // namespace kiln
