// Estimator::train: restore, build, the step loop with hooks, checkpoints.
#include "kiln/estimator.h"

#include <cmath>
#include <limits>
#include <ostream>

#include "kiln/error.h"
#include "kiln/optimizer.h"
#include "train/estimator_state.h"
#include "train/step_progress.h"

namespace kiln {

Estimator::Estimator(ModelFunction model_fn, RunConfig config, Params params, EstimatorOptions options)
    : s_(std::make_unique<State>()),
      model_fn_(std::move(model_fn)),
      config_(std::move(config)),
      params_(std::move(params)),
      options_(std::move(options)) {
  if (!model_fn_) KILN_THROW(ConfigError) << "[model_fn] is empty";
  config_.validate();
}

Estimator::~Estimator() = default;

const Variables& Estimator::variables() const { return s_->vars; }

int64_t Estimator::global_step() const {
  auto it = s_->vars.find("global_step");
  return it == s_->vars.end() ? 0 : static_cast<int64_t>(it->second.item());
}

namespace {

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "\n  " + l;
  return out;
}

}  // namespace

TrainStats Estimator::train(const InputFn& input_fn, int64_t max_steps, HookList hooks) {
  if (max_steps <= 0) KILN_THROW(ConfigError) << "[max_steps] '" << max_steps << "' must be >= 1";
  if (!input_fn) KILN_THROW(ConfigError) << "[input_fn] is empty";
  for (const auto& h : hooks)
    if (!h) KILN_THROW(ConfigError) << "[hooks] a hook is null";
  const std::optional<AccelerateTrainMode> accel = config_.experimental_config.parsed_accelerate_train_mode();
  const TellMeStepOrLossHook* tell = accel ? &accelerate_hook(hooks, *accel) : nullptr;
  std::optional<CheckpointDir> dir;
  if (!config_.model_dir.empty()) {
    dir.emplace(config_.model_dir, config_.keep_checkpoint_max);
    dir->prepare();
  }
  const double compile_before = s_->compile_seconds;
  TrainStats st;
  st.final_loss = std::numeric_limits<double>::quiet_NaN();

  // Restore: the in-memory state of an earlier train() wins; else the newest checkpoint.
  std::optional<Checkpoint> restored;
  if (s_->vars.empty() && dir) restored = dir->load_latest();
  st.start_step = restored ? restored->step : global_step();
  st.global_step = st.start_step;
  if (st.start_step >= max_steps) {
    if (options_.log)
      *options_.log << "global step " << st.start_step << " already reached max_steps " << max_steps
                    << "; nothing to train\n";
    return st;
  }

  std::unique_ptr<data::BatchSource> source = input_fn();
  if (!source) KILN_THROW(ConfigError) << "[input_fn] returned no source";
  source->skip(st.start_step);  // one batch per step: continue where the run stopped
  data::Batch batch;
  if (!source->next(batch)) KILN_THROW(DataError) << "[input_fn] the input yields no batches";

  std::vector<std::string> fetches;
  for (const auto& h : hooks)
    for (auto& f : h->fetches()) fetches.push_back(f);
  BuiltGraph& built = build_graph(*s_, model_fn_, params_, backend_options(), ModeKeys::train, batch, fetches);
  // accelerate_train_mode: the low-precision executable is built now too, so the switch
  // never waits for a compile.
  BuiltGraph* low = nullptr;
  if (accel) {
    BackendOptions lo = backend_options();
    lo.policy = low_phase_policy(*accel);
    low = &build_graph(*s_, model_fn_, params_, lo, ModeKeys::train, batch, fetches, /*guarded=*/true);
  }
  if (restored) {
    const auto bad = checkpoint_mismatches(*built.graph, restored->variables);
    if (!bad.empty())
      KILN_THROW(CheckpointError) << "[checkpoint] '" << dir->path_for(restored->step)
                                  << "' does not fit this model (" << bad.size() << " mismatch"
                                  << (bad.size() == 1 ? "" : "es") << "):" << join_lines(bad)
                                  << "\nuse another --model-dir, or delete the checkpoints to start over";
    s_->vars = std::move(restored->variables);
    st.resumed = true;
    if (options_.log) *options_.log << "resumed from checkpoint at step " << st.start_step << "\n";
  } else if (!s_->vars.empty()) {
    const auto bad = checkpoint_mismatches(*built.graph, s_->vars);
    if (!bad.empty()) KILN_THROW(ConfigError) << "[train] the model changed between train() calls:" << join_lines(bad);
  }
  initialize_variables(*built.graph, s_->vars);
  if (low) {
    const auto bad = checkpoint_mismatches(*low->graph, s_->vars);
    if (!bad.empty())
      KILN_THROW(ConfigError) << "[model_fn] built other variables the second time it ran (for the low-precision"
                                 " graph of accelerate_train_mode); it must build the same model every time:"
                              << join_lines(bad);
  }
  st.compile_seconds = s_->compile_seconds - compile_before;

  PrecisionSwitch* sw = nullptr;
  if (accel) {
    if (restored || !s_->precision_switch || !(s_->precision_switch->mode() == *accel)) {
      s_->precision_switch = std::make_unique<PrecisionSwitch>(PrecisionSwitchOptions{
          *accel, tell->target(), tell->total_step() > 0 ? tell->total_step() : max_steps,
          config_.experimental_config.accelerate_loss_window, config_.experimental_config.accelerate_max_low_share});
      const std::string note = s_->precision_switch->restore(restored ? restored->state : nlohmann::json(),
                                                             st.start_step);
      if (options_.log && st.start_step > 0) *options_.log << "accelerate_train_mode: " << note << "\n";
    }
    sw = s_->precision_switch.get();
    st.accelerate.emplace();
    st.accelerate->mode = accel->to_string();
    st.accelerate->low_phase = std::string(precision_policy_name(low_phase_policy(*accel)));
    st.accelerate->requested_switch_step = sw->planned_switch_step();
    st.accelerate->loss_target = accel->split == AccelerateTrainMode::Split::loss
                                     ? sw->loss_target()
                                     : std::numeric_limits<double>::quiet_NaN();
  }

  HookList all;
  all.push_back(std::make_shared<NanGuardHook>(true, options_.log));
  all.insert(all.end(), hooks.begin(), hooks.end());
  if (options_.log && config_.log_step_count_steps > 0)
    all.push_back(std::make_shared<LoggingHook>(config_.log_step_count_steps, *options_.log));
  if (dir) all.push_back(std::make_shared<CheckpointSaverHook>(*dir, config_.save_checkpoints_steps));

  RunContext ctx;
  ctx.global_step = st.start_step;
  ctx.max_steps = max_steps;
  ctx.variables = &s_->vars;
  ctx.phase = sw ? sw->phase() : "original";
  ctx.train_state = [&ctx, sw] { return sw ? sw->state() : nlohmann::json{{"phase", ctx.phase}}; };
  for (auto& h : all) h->begin(ctx);

  const double t0 = now_seconds();
  auto announce = [&](int64_t step, double window_mean) {
    PrecisionSwitchEvent e{step,           sw->planned_switch_step(), sw->switched()->reason, st.final_loss,
                           window_mean,    now_seconds() - t0,        st.accelerate->low_phase};
    st.accelerate->event = e;
    if (options_.on_precision_switch) {
      options_.on_precision_switch(e);
    } else if (options_.log) {
      *options_.log << "accelerate_train_mode: switched from " << e.low_phase << " to the original precision at step "
                    << e.step << " (requested " << e.requested_step << ", reason " << e.reason << "), "
                    << e.seconds << " s into training, last low-precision loss " << e.loss << "\n";
    }
  };
  bool have_batch = true, input_ended = false;
  Feeds feeds;
  int64_t& gs = st.global_step;
  while (gs < max_steps && !ctx.stop_requested()) {
    ctx.loop_size = std::min<int64_t>(config_.iterations_per_loop, max_steps - gs);
    ctx.global_step = gs;
    for (auto& h : all) h->before_run(ctx);
    RunValues rv;
    for (int64_t i = 0; i < ctx.loop_size; ++i) {
      if (!have_batch && !source->next(batch)) {
        input_ended = true;
        break;
      }
      have_batch = false;
      feeds["features"] = std::move(batch.features);
      feeds["labels"] = std::move(batch.labels);
      // The precision switch picks the executable step by step, so a loop that straddles
      // the switch step is split exactly there.
      Executable* exec = built.exec.get();
      bool low_step = false;
      if (sw) {
        if (sw->before_step(gs)) announce(gs, sw->window_mean());
        low_step = sw->low();
      }
      if (low_step) {
        exec = low->exec.get();
        feeds[kLossScaleName] = Array::scalar(DType::f32, sw->loss_scale());
      } else {
        feeds.erase(kLossScaleName);
      }
      const double ts = now_seconds();
      const int64_t step_before = gs;
      rv.values = exec->run(feeds, s_->vars);
      const double step_seconds = now_seconds() - ts;
      gs = static_cast<int64_t>(s_->vars.at("global_step").item());
      require_step_advanced(step_before, gs);
      // The fetched global_step is read at the start of the step; report the step reached.
      rv.values["global_step"] = s_->vars.at("global_step");
      const double loss = rv.values.at("loss").item();
      rv.losses.push_back(loss);
      st.losses.push_back(loss);
      st.final_loss = loss;
      ++st.steps;
      if (sw) {
        AccelerateStats& a = *st.accelerate;
        bool skipped = false;
        if (low_step) {
          ++a.low_steps;
          a.low_seconds += step_seconds;
          skipped = rv.values.at(kGradsFiniteName).item() == 0;
          a.skipped_updates += skipped;
          const bool by_loss = tell->kind() == TellMeStepOrLossHook::Kind::loss;
          const double watched = by_loss ? rv.values.at(tell->name()).item() : loss;
          const double mean_before = sw->window_mean();
          if (sw->after_low_step(gs, watched, !skipped))
            announce(gs, sw->switched()->reason == "loss" ? sw->window_mean() : mean_before);
        } else {
          ++a.original_steps;
          a.original_seconds += step_seconds;
        }
        rv.update_skipped.resize(rv.losses.size() - 1, false);
        rv.update_skipped.push_back(skipped);
        ctx.phase = low_step ? a.low_phase : "original";  // the phase this step ran in
      }
      if (options_.interrupt && options_.interrupt->load()) {
        st.interrupted = true;
        break;
      }
    }
    if (rv.losses.empty()) break;
    ctx.global_step = gs;
    for (auto& h : all) h->after_run(ctx, rv);
    if (st.interrupted || input_ended) break;
  }
  st.stopped_by_hook = ctx.stop_requested() && !st.interrupted;
  st.train_seconds = now_seconds() - t0;
  if (sw) {
    st.accelerate->loss_scale = sw->loss_scale();
    if (sw->switched()) {
      st.accelerate->switch_step = sw->switched()->step;
      st.accelerate->switch_reason = sw->switched()->reason;
    }
  }
  ctx.global_step = gs;
  for (auto& h : all) h->end(ctx);
  return st;
}

}  // namespace kiln
