// The Estimator's side of the summaries (kiln/summary.h): the records train() and
// evaluate() append to <model_dir>/summaries.jsonl.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kiln/estimator.h"
#include "kiln/summary.h"

namespace kiln {

// Built in after the user's hooks (so that their scalars of a step go into its record):
// a "progress" record every `every_n` steps and at the end, the scalars hooks added with
// RunContext::add_scalar, and the "precision_switch" record once `accel` has switched.
class SummaryHook : public Hook {
 public:
  // `learning_rate`: the rate of the step after global step t, or empty when params has
  // none. `accel`: the call's accelerate stats (nullptr without accelerate_train_mode).
  using LearningRate = std::function<double(int64_t)>;
  SummaryHook(SummaryWriter& writer, int64_t every_n, LearningRate learning_rate, const AccelerateStats* accel)
      : writer_(writer), every_(every_n), learning_rate_(std::move(learning_rate)), accel_(accel) {}
  void begin(RunContext& ctx) override;
  void after_run(RunContext& ctx, const RunValues& v) override;
  void end(RunContext& ctx) override;

 private:
  void write_switch();
  void write_progress(RunContext& ctx);
  void write_off_interval(RunContext& ctx);
  SummaryWriter& writer_;
  int64_t every_;
  LearningRate learning_rate_;
  const AccelerateStats* accel_;
  bool switch_written_ = false;
  double started_ = 0;
  // Since the previous progress record:
  double loss_sum_ = 0, seconds_ = 0;
  int64_t count_ = 0;
};

// The summary writer of a train() or evaluate() call: nullopt without model_dir or with
// save_summary_steps = 0. Its TensorBoard events go to model_dir ("") or model_dir/<events_subdir>.
std::optional<SummaryWriter> open_summaries(const RunConfig& config, const std::string& events_subdir = "");

// The "start" record of a train() call.
nlohmann::json start_record(const RunConfig& config, const Params& params, const std::string& backend,
                            const TrainStats& st, int64_t max_steps);
// The "end" record of a train() call.
nlohmann::json end_record(const TrainStats& st, const CompileSummary& compile);
// The "eval" record of an evaluate() call.
nlohmann::json eval_record(const Evaluation& ev);
// params' learning rate when it is a number, following params' schedule when they set one
// that optimizer_params.h reads (step t: the rate of the update after global step t);
// empty otherwise.
SummaryHook::LearningRate learning_rate_of(const Params& params);

}  // namespace kiln
