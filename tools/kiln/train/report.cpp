// The end of `kiln train`: the final evaluation, the "done" and "compile" lines, and the
// final record (with its data-parallel part), or the record of an interrupted run.
#include <cmath>
#include <cstdio>

#include <omp.h>

#include "kiln/backend/cpu_features.h"
#include "kiln/base/error.h"
#include "kiln/process/process.h"
#include "kiln/train/summary.h"
#include "kiln/dist/world.h"

#include "accelerate_summary.h"
#include "metrics_writer.h"
#include "progress_hook.h"
#include "train/command.h"

namespace kiln::cli {

nlohmann::json TrainCommand::optimizer_record() const {
  const OptimizerSettings& o = optimizer_;
  nlohmann::json r = {{"optimizer", o.name},
                      {"learning_rate", o.learning_rate},
                      {"batch_size", settings_.batch_size},
                      {"learning_rate_schedule", learning_rate_schedule_name(o.schedule.kind)},
                      {"warmup_steps", o.schedule.warmup_steps},
                      {"clip_norm", o.clip_norm}};
  if (o.schedule.kind == LearningRateSchedule::Kind::cosine) {
    r["decay_steps"] = o.schedule.decay_steps;
    r["final_learning_rate"] = o.schedule.final_rate;
  }
  if (o.name == "momentum") r["momentum"] = o.momentum;
  if (o.uses_adam_moments()) {
    r["beta1"] = o.beta1;
    r["beta2"] = o.beta2;
    r["epsilon"] = o.epsilon;
  }
  if (o.name == "adamw") r["weight_decay"] = o.weight_decay;
  return r;
}

int TrainCommand::report_interrupted() {
  const int64_t global = totals_.st.global_step;
  progress_->finish_line();
  std::printf("interrupted at step %lld%s\n", static_cast<long long>(global),
              config_.model_dir.empty() ? " (no --model-dir: nothing saved)"
                                        : ("; checkpoint saved in " + config_.model_dir).c_str());
  metrics_->write({{"event", "interrupted"}, {"step", global}, {"model_dir", config_.model_dir}});
  return 130;
}

void TrainCommand::add_world_record(nlohmann::json& record, const CompileSummary& cs) const {
  World& world = World::get();
  record["world_size"] = world.size();
  if (!world.distributed()) return;
  // One value of every rank (every rank takes part): what each compiled, loaded, switched.
  const auto by_rank = [&world](double mine) {
    std::vector<double> all(static_cast<size_t>(world.size()), 0.0);
    all[static_cast<size_t>(world.rank())] = mine;
    world.all_reduce_sum(all.data(), static_cast<int64_t>(all.size()));
    return all;
  };
  const std::vector<double> hits = by_rank(cs.cache_hits), graphs = by_rank(cs.graphs);
  const std::vector<double> received = by_rank(cs.received), compiled = by_rank(cs.compiled());
  const TrainStats& st = totals_.st;
  const std::vector<double> switches =
      by_rank(st.accelerate && st.accelerate->switch_step ? static_cast<double>(*st.accelerate->switch_step) : -1);
  nlohmann::json per_rank = nlohmann::json::array(), switch_steps = nlohmann::json::array();
  for (size_t r = 0; r < hits.size(); ++r) {
    per_rank.push_back({{"rank", r},
                        {"graphs", static_cast<int64_t>(graphs[r])},
                        {"cache_hits", static_cast<int64_t>(hits[r])},
                        {"received", static_cast<int64_t>(received[r])},
                        {"compiled", static_cast<int64_t>(compiled[r])}});
    switch_steps.push_back(switches[r] < 0 ? nlohmann::json() : nlohmann::json(static_cast<int64_t>(switches[r])));
  }
  const double share = st.train_seconds > 0 ? st.collective_seconds / st.train_seconds : 0.0;
  const int64_t per_step = st.steps > 0 ? st.bytes_reduced / st.steps : 0;
  const double calls_per_step = st.steps > 0 ? static_cast<double>(st.all_reduce_calls) / static_cast<double>(st.steps) : 0;
  record["data_parallel"] = {{"world_size", world.size()},
                             {"threads_per_rank", omp_get_max_threads()},
                             {"collective_seconds", st.collective_seconds},
                             {"collective_share_of_train", share},
                             {"bytes_reduced", st.bytes_reduced},
                             {"bytes_reduced_per_step", per_step},
                             {"all_reduce_calls", st.all_reduce_calls},
                             {"all_reduce_calls_per_step", calls_per_step},
                             {"overlapped_all_reduce_calls", st.overlapped_all_reduce_calls},
                             {"compile_by_rank", per_rank},
                             {"switch_step_by_rank", switch_steps}};
  std::printf("data parallel: %d ranks x %d threads; %.2fs in collectives (%.0f%% of training), %lld bytes reduced"
              " per step in %.1f MPI_Allreduce calls\n",
              world.size(), omp_get_max_threads(), st.collective_seconds, 100 * share,
              static_cast<long long>(per_step), calls_per_step);
}

void TrainCommand::print_final(const Evaluation& ev, const CompileSummary& cs) const {
  const TrainStats& st = totals_.st;
  const double compile_s = totals_.compile_s, train_s = totals_.train_s, eval_s = totals_.eval_s;
  const double rate = train_s > 0 ? static_cast<double>(st.steps) / train_s : 0;
  const std::string resumed = " (" + std::to_string(st.steps) + " this run, resumed at " +
                              std::to_string(st.start_step) + ")";
  const std::string split = recipe_->eval_split();
  std::printf("done: %lld steps%s in %.1fs (compile %.1fs, train %.1fs, eval %.1fs); %.1f steps/s, %.0f examples/s; "
              "final loss %.4f, %s loss %.4f, %s accuracy %.4f\n",
              static_cast<long long>(st.global_step), st.resumed ? resumed.c_str() : "",
              compile_s + train_s + eval_s, compile_s, train_s, eval_s, rate,
              rate * static_cast<double>(settings_.batch_size), st.final_loss, split.c_str(), ev.at("loss"),
              split.c_str(), ev.at("accuracy"));
  if (st.accelerate) {
    AccelerateTotals accel;
    accel.add(*st.accelerate);
    std::printf("%s", accel.summary().c_str());
  }
  const double compile_total = cs.passes_seconds + cs.codegen_seconds + cs.compile_seconds + cs.load_seconds;
  if (cs.interpreter_fallbacks > 0)
    std::printf("compile: native compilation failed for %d of %d graphs; they ran on the interpreter\n",
                cs.interpreter_fallbacks, cs.graphs);
  else if (backend_ == Backend::cpu)
    std::printf("compile: cache %s (%d of %d graphs loaded from the cache); %.3fs = passes %.3fs, codegen %.3fs, "
                "c++ %.3fs, load %.3fs\n",
                std::string(cache_outcome_name(cs.cache())).c_str(), cs.cache_hits, cs.graphs, compile_total,
                cs.passes_seconds, cs.codegen_seconds, cs.compile_seconds, cs.load_seconds);
}

nlohmann::json TrainCommand::final_record(const Evaluation& ev, const CompileSummary& cs) const {
  const TrainStats& st = totals_.st;
  const double rate = totals_.train_s > 0 ? static_cast<double>(st.steps) / totals_.train_s : 0;
  nlohmann::json record = {{"event", "final"},
                           {"steps", st.global_step},
                           {"steps_this_run", st.steps},
                           {"resumed_from_step", st.resumed ? st.start_step : 0},
                           {"train_seconds", totals_.train_s},
                           {"compile_seconds", totals_.compile_s},
                           {"eval_seconds", totals_.eval_s},
                           {"steps_per_second", rate},
                           {"examples_per_second", rate * static_cast<double>(settings_.batch_size)},
                           {"final_loss", st.final_loss},
                           {"test_loss", ev.at("loss")},
                           {"test_accuracy", ev.at("accuracy")},
                           {"test_examples", ev.examples},
                           {"model", settings_.model},
                           {"backend", std::string(backend_name(backend_))},
                           {"threads", omp_get_max_threads()},
                           {"openmp_wait", openmp_wait_setting()},
                           {"compile_cache", cache_outcome_name(cs.cache())},
                           {"compile", compile_record(cs)},
                           // What `kiln report` shows beside the numbers:
                           {"kiln_version", KILN_VERSION},
                           {"cpu", cpu_features().model},
                           {"isa", cpu_features().isa()},
                           {"config", config_record(config_)},
                           {"params", optimizer_record()}};
  record.update(recipe_->final_record(settings_));
  if (st.accelerate) {
    AccelerateTotals accel;
    accel.add(*st.accelerate);
    record["accelerate"] = accel.to_json();
  }
  if (cs.interpreter_fallbacks > 0) {
    // What ran, not what was asked for.
    record["backend"] = cs.interpreter_fallbacks == cs.graphs ? "interp" : "cpu+interp";
    record["backend_requested"] = std::string(backend_name(backend_));
    record["interpreter_fallbacks"] = cs.interpreter_fallbacks;
  }
  return record;
}

void TrainCommand::report_final(Estimator& est, const TrainData& data) {
  const Evaluation ev = est.evaluate(data.eval_input);
  count_evaluation(ev);
  const CompileSummary& cs = est.compile_summary();
  print_final(ev, cs);
  nlohmann::json record = final_record(ev, cs);
  add_world_record(record, cs);  // prints the data-parallel line after the compile line
  metrics_->write(record);
  if (!std::isfinite(ev.at("loss")))
    KILN_THROW(Error) << "[evaluate] the test loss is " << ev.at("loss") << " after " << totals_.st.global_step
                      << " steps: the model diverged (the weights are not finite); try a smaller --learning-rate";
}

}  // namespace kiln::cli
