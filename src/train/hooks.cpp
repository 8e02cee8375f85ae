// The built-in hooks.
#include "kiln/train/hooks.h"

#include <cmath>
#include <cstdio>
#include <ostream>

#include "kiln/base/error.h"
#include "train/estimator_state.h"

namespace kiln {

void NanGuardHook::after_run(RunContext& ctx, const RunValues& v) {
  const int64_t first = ctx.global_step - static_cast<int64_t>(v.losses.size());
  for (size_t i = 0; i < v.losses.size(); ++i) {
    if (std::isfinite(v.losses[i]) || v.skipped(i)) continue;
    // Steps are counted from 1 in messages: the step that produced the loss.
    const int64_t step = first + static_cast<int64_t>(i) + 1;
    char buf[160];
    std::snprintf(buf, sizeof buf, "[nan_guard] loss is %s at step %lld", std::isnan(v.losses[i]) ? "nan" : "inf",
                  static_cast<long long>(step));
    if (fail_) throw NanLossError(std::string(buf) + "; training stopped, no checkpoint written for this step");
    if (log_) *log_ << buf << "; stopping\n";
    ctx.request_stop();
    return;
  }
}

void LoggingHook::begin(RunContext& ctx) {
  last_step_ = ctx.global_step;
  mark_ = now_seconds();
}

void LoggingHook::after_run(RunContext& ctx, const RunValues& v) {
  for (double l : v.losses) loss_sum_ += l;
  count_ += static_cast<int64_t>(v.losses.size());
  if (every_ <= 0 || (ctx.global_step / every_ == (ctx.global_step - static_cast<int64_t>(v.losses.size())) / every_ &&
                      ctx.global_step < ctx.max_steps))
    return;
  const double t = now_seconds();
  char buf[160];
  std::snprintf(buf, sizeof buf, "step %lld  loss %.4f  %.1f steps/s\n", static_cast<long long>(ctx.global_step),
                loss_sum_ / static_cast<double>(count_),
                static_cast<double>(ctx.global_step - last_step_) / std::max(t - mark_, 1e-9));
  out_ << buf << std::flush;
  last_step_ = ctx.global_step;
  mark_ = t;
  loss_sum_ = 0;
  count_ = 0;
}

Variables RunContext::checkpointed_variables() const {
  KILN_CHECK(variables != nullptr) << "the Estimator sets RunContext::variables";
  Variables v = *variables;
  for (const auto& name : local_variables) v.erase(name);
  return v;
}

void CheckpointSaverHook::save(const RunContext& ctx) {
  Checkpoint c;
  c.step = ctx.global_step;
  c.variables = ctx.checkpointed_variables();
  if (ctx.train_state) c.state = ctx.train_state();
  dir_.save(c);
  last_saved_ = ctx.global_step;
}

void CheckpointSaverHook::after_run(RunContext& ctx, const RunValues& v) {
  if (every_ <= 0) return;
  const int64_t before = ctx.global_step - static_cast<int64_t>(v.losses.size());
  if (ctx.global_step / every_ != before / every_) save(ctx);
}

void CheckpointSaverHook::end(RunContext& ctx) {
  if (last_saved_ != ctx.global_step) save(ctx);
}

namespace {
std::string without_output_index(std::string name) {
  if (name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0) name.resize(name.size() - 2);
  return name;
}
}  // namespace

TellMeStepOrLossHook::TellMeStepOrLossHook(std::string step, int64_t total_step)
    : TellMeStepOrLossHook(Kind::step, without_output_index(std::move(step)), static_cast<double>(total_step),
                           total_step) {
  if (name_.empty()) KILN_THROW(ConfigError) << "[TellMeStepOrLossHook] the step value's name is empty";
  if (total_step <= 0) KILN_THROW(ConfigError) << "[TellMeStepOrLossHook] total_step '" << total_step << "' must be >= 1";
}

std::shared_ptr<TellMeStepOrLossHook> TellMeStepOrLossHook::loss(std::string loss, double final_loss,
                                                                 int64_t total_step) {
  if (loss.empty()) KILN_THROW(ConfigError) << "[TellMeStepOrLossHook] the loss value's name is empty";
  if (!(final_loss > 0) || !std::isfinite(final_loss))
    KILN_THROW(ConfigError) << "[TellMeStepOrLossHook] final_loss '" << final_loss << "' must be a positive number";
  if (total_step < 0)
    KILN_THROW(ConfigError) << "[TellMeStepOrLossHook] total_step '" << total_step << "' must be >= 1 (or 0: not given)";
  return std::shared_ptr<TellMeStepOrLossHook>(
      new TellMeStepOrLossHook(Kind::loss, without_output_index(std::move(loss)), final_loss, total_step));
}

void TellMeStepOrLossHook::after_run(RunContext&, const RunValues& v) {
  const Array& a = v.values.at(name_);
  if (a.numel() != 1)
    KILN_THROW(ConfigError) << "[TellMeStepOrLossHook] '" << name_ << "' has shape " << shape_str(a.shape())
                            << "; it must be a scalar";
  last_ = a.item();
  ++reports_;
  if (on_report) on_report(*last_);
}

}  // namespace kiln
