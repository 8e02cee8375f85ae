#include "train/summary/hook.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>

#include "kiln/backend/cpu_features.h"
#include "kiln/base/error.h"
#include "kiln/train/optimizer_params.h"
#include "kiln/process/process.h"
#include "train/estimator_state.h"

namespace kiln {
namespace {

// Did the loop that ended at ctx.global_step, `steps` long, cross a multiple of `every`
// or reach the last step?
bool due(const RunContext& ctx, int64_t steps, int64_t every) {
  const int64_t before = ctx.global_step - steps;
  return every > 0 && (ctx.global_step / every != before / every || ctx.global_step >= ctx.max_steps);
}

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}
}  // namespace

void RecordStreams::write(nlohmann::json record) {
  if (!record.contains("wall_time")) record["wall_time"] = unix_seconds();
  for (const Stream& s : streams_) s.sink->write(record);
}

void RecordStreams::write_to(size_t i, nlohmann::json record) {
  if (!record.contains("wall_time")) record["wall_time"] = unix_seconds();
  streams_[i].sink->write(std::move(record));
}

SummaryHook::SummaryHook(RecordStreams& streams, LearningRate learning_rate, const AccelerateStats* accel)
    : streams_(streams), learning_rate_(std::move(learning_rate)), accel_(accel), windows_(streams.size()) {}

void SummaryHook::begin(RunContext&) { started_ = now_seconds(); }

void SummaryHook::write_switch() {
  if (switch_written_ || !accel_ || !accel_->event) return;
  streams_.write(precision_switch_record(*accel_->event, accel_->event->seconds));
  switch_written_ = true;
}

void SummaryHook::write_step(RunContext& ctx, const std::vector<bool>& progress) {
  const std::map<std::string, double> scalars = ctx.take_scalars();
  const nlohmann::json values = ctx.take_summary_values();
  const double wall_time = unix_seconds(), elapsed = now_seconds() - started_;
  // What only progress records hold is worked out only on a step that has one.
  const bool any_progress = std::find(progress.begin(), progress.end(), true) != progress.end();
  const std::optional<double> rate = learning_rate_ && any_progress
                                         ? std::optional<double>(learning_rate_(ctx.global_step - 1))
                                         : std::nullopt;
  std::optional<double> loss_scale;
  if (ctx.phase == PrecisionPhase::mixed_float16 && ctx.train_state && any_progress) {
    const nlohmann::json state = ctx.train_state();
    if (state.contains("loss_scaler")) loss_scale = state["loss_scaler"].value("scale", 1.0);
  }
  for (size_t i = 0; i < streams_.size(); ++i) {
    nlohmann::json r;
    if (progress[i]) {
      Window& w = windows_[i];
      r = progress_record(ctx.global_step, w.loss_sum / static_cast<double>(w.count),
                          w.seconds > 0 ? static_cast<double>(w.count) / w.seconds : 0.0, elapsed, ctx.phase, rate);
      if (loss_scale) r["loss_scale"] = *loss_scale;
      if (!scalars.empty()) r["scalars"] = scalars;
      w = {};
    } else {
      // Hooks' values at a step that is not this sink's progress step: a record of their own.
      if (scalars.empty() && values.empty()) continue;
      r = {{"event", "scalars"}, {"step", ctx.global_step}, {"scalars", scalars}};
    }
    for (const auto& [kind, v] : values.items()) r[kind] = v;
    r["wall_time"] = wall_time;
    streams_.write_to(i, std::move(r));
  }
}

void SummaryHook::after_run(RunContext& ctx, const RunValues& v) {
  const auto n = static_cast<int64_t>(v.losses.size());
  std::vector<bool> progress(streams_.size());
  for (size_t i = 0; i < streams_.size(); ++i) {
    Window& w = windows_[i];
    for (double l : v.losses) w.loss_sum += l;
    w.count += n;
    w.seconds += v.seconds;
    progress[i] = due(ctx, n, streams_[i].progress_every);
  }
  write_switch();
  write_step(ctx, progress);
}

void SummaryHook::end(RunContext& ctx) {
  write_switch();
  // A run stopped between two progress steps still ends with one, for the sinks that keep them.
  std::vector<bool> progress(streams_.size());
  for (size_t i = 0; i < streams_.size(); ++i) progress[i] = streams_[i].progress_every > 0 && windows_[i].count > 0;
  write_step(ctx, progress);
}

std::optional<SummaryWriter> open_summaries(const RunConfig& config, const std::string& events_subdir) {
  if (config.model_dir.empty() || config.save_summary_steps <= 0) return std::nullopt;
  const std::string events = events_subdir.empty() ? config.model_dir : (std::filesystem::path(config.model_dir) / events_subdir).string();
  return std::optional<SummaryWriter>(std::in_place, summary_path(config.model_dir), events);
}

SummaryHook::LearningRate learning_rate_of(const Params& params) {
  const auto it = params.entries().find("learning_rate");
  if (it == params.entries().end() || !std::holds_alternative<double>(it->second)) return {};
  const double base = std::get<double>(it->second);
  LearningRateSchedule schedule;
  try {
    schedule = optimizer_settings(params).schedule;
  } catch (const ConfigError&) {
    // params of the user's own model_fn that mean something else: the number as given
  }
  return [base, schedule](int64_t step) { return learning_rate_at(base, schedule, step); };
}

nlohmann::json start_record(const RunConfig& config, const Params& params, const std::string& backend,
                            const TrainStats& st, int64_t max_steps) {
  nlohmann::json p = nlohmann::json::object();
  for (const auto& [k, v] : params.entries())
    std::visit([&p, &k = k](const auto& x) { p[k] = x; }, v);
  const CpuFeatures& cpu = cpu_features();
  return {{"event", "start"},
          {"step", st.start_step},
          {"max_steps", max_steps},
          {"resumed", st.resumed},
          {"kiln_version", KILN_VERSION},
          {"cpu", cpu.model},
          {"isa", cpu.isa()},
          {"openmp_wait", openmp_wait_setting()},
          {"backend", backend},
          {"config", config_record(config)},
          {"params", p}};
}

nlohmann::json end_record(const TrainStats& st, const CompileSummary& compile) {
  nlohmann::json r = {{"event", "end"},
                      {"step", st.global_step},
                      {"steps", st.global_step},
                      {"steps_this_run", st.steps},
                      {"train_seconds", st.train_seconds},
                      {"compile_seconds", st.compile_seconds},
                      {"steps_per_second", st.steps_per_second()},
                      {"final_loss", number_or_null(st.final_loss)},
                      {"interrupted", st.interrupted},
                      {"compile", compile_record(compile)}};
  if (st.accelerate) r["accelerate"] = accelerate_record(*st.accelerate);
  return r;
}

}  // namespace kiln
