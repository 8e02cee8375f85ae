#include "train/summary/summary_hook.h"

#include <cmath>
#include <filesystem>

#include "kiln/cpu_features.h"
#include "kiln/error.h"
#include "kiln/optimizer_params.h"
#include "train/estimator_state.h"

namespace kiln {
namespace {

// Did the loop that ended at ctx.global_step, `steps` long, cross a multiple of `every`
// or reach the last step?
bool due(const RunContext& ctx, int64_t steps, int64_t every) {
  const int64_t before = ctx.global_step - steps;
  return every > 0 && (ctx.global_step / every != before / every || ctx.global_step >= ctx.max_steps);
}
}  // namespace

void SummaryHook::begin(RunContext&) { started_ = now_seconds(); }

void SummaryHook::write_switch() {
  if (switch_written_ || !accel_ || !accel_->event) return;
  writer_.write(precision_switch_record(*accel_->event, accel_->event->seconds));
  switch_written_ = true;
}

void SummaryHook::write_progress(RunContext& ctx) {
  nlohmann::json r = progress_record(
      ctx.global_step, loss_sum_ / static_cast<double>(count_), seconds_ > 0 ? static_cast<double>(count_) / seconds_ : 0.0,
      now_seconds() - started_, ctx.phase,
      learning_rate_ ? std::optional<double>(learning_rate_(ctx.global_step - 1)) : std::nullopt);
  if (ctx.phase == PrecisionPhase::mixed_float16 && ctx.train_state) {
    const nlohmann::json state = ctx.train_state();
    if (state.contains("loss_scaler")) r["loss_scale"] = state["loss_scaler"].value("scale", 1.0);
  }
  if (auto scalars = ctx.take_scalars(); !scalars.empty()) r["scalars"] = scalars;
  nlohmann::json values = ctx.take_summary_values();  // held: items() of a temporary would dangle
  for (auto& [kind, v] : values.items()) r[kind] = std::move(v);
  writer_.write(std::move(r));
  loss_sum_ = seconds_ = 0;
  count_ = 0;
}

// Hooks' values at a step that is not a summary step: a "scalars" record of their own.
void SummaryHook::write_off_interval(RunContext& ctx) {
  const auto scalars = ctx.take_scalars();
  nlohmann::json values = ctx.take_summary_values();
  if (scalars.empty() && values.empty()) return;
  nlohmann::json r = {{"event", "scalars"}, {"step", ctx.global_step}, {"scalars", scalars}};
  for (auto& [kind, v] : values.items()) r[kind] = std::move(v);
  writer_.write(std::move(r));
}

void SummaryHook::after_run(RunContext& ctx, const RunValues& v) {
  for (double l : v.losses) loss_sum_ += l;
  count_ += static_cast<int64_t>(v.losses.size());
  seconds_ += v.seconds;
  write_switch();
  if (due(ctx, static_cast<int64_t>(v.losses.size()), every_)) return write_progress(ctx);
  write_off_interval(ctx);
}

void SummaryHook::end(RunContext& ctx) {
  write_switch();
  if (count_ > 0) write_progress(ctx);  // a run stopped between two summary steps
  write_off_interval(ctx);
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
          {"backend", backend},
          {"config",
           {{"precision_mode", config.precision_mode},
            {"precision_mode_v2", config.precision_mode_v2},
            {"accelerate_train_mode", config.experimental_config.accelerate_train_mode},
            {"iterations_per_loop", config.iterations_per_loop}}},
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

nlohmann::json eval_record(const Evaluation& ev) {
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [name, value] : ev.metrics) metrics[name] = number_or_null(value);
  return {{"event", "eval"},
          {"step", ev.global_step},
          {"metrics", metrics},
          {"examples", ev.examples},
          {"seconds", ev.seconds - ev.compile_seconds},
          {"compile_seconds", ev.compile_seconds}};
}

}  // namespace kiln
