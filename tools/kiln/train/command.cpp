#include "train/command.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include <omp.h>

#include <nlohmann/json.hpp>

#include "kiln/backend/backend.h"
#include "kiln/base/error.h"
#include "kiln/process/interrupts.h"
#include "kiln/train/model_dir_lock.h"
#include "kiln/train/optimizer_params.h"
#include "kiln/train/summary.h"
#include "kiln/data/text_data.h"
#include "kiln/dist/world.h"

// CLI-private headers, beside this file (not under the public kiln/ prefix).
#include "eval_hook.h"
#include "input_checks.h"
#include "metrics_writer.h"
#include "option_checks.h"
#include "progress_hook.h"
#include "report_command.h"
#include "run_config_options.h"

namespace kiln::cli {

TrainCommand::TrainCommand(CLI::App& parent) {
  backend_option_ = std::string(backend_name(kDefaultBackend));
  cmd_ = parent.add_subcommand("train",
                               "Train a model and evaluate it: mlp or cnn on Fashion-MNIST (test set), gpt on a text "
                               "(validation split: its last 10%)");
  add_options();
}

void TrainCommand::add_options() {
  TrainSettings& s = settings_;
  GptShape& gpt = s.gpt;
  cmd_->add_option("--model", s.model, "Model to train")->check(CLI::IsMember(recipe_names()))->capture_default_str();
  cmd_->add_option("--data", s.data,
                   "mlp, cnn: directory holding the Fashion-MNIST IDX files; gpt: a UTF-8 text file or a folder of them "
                   "(default " + std::string(data::kDefaultFortunesDir) + ")")
      ->capture_default_str();
  cmd_->add_option("--layers", gpt.layers, "gpt: transformer blocks")->check(whole_number(1, 256))->capture_default_str();
  cmd_->add_option("--heads", gpt.heads, "gpt: attention heads (must divide --width)")
      ->check(whole_number(1, 1024))
      ->capture_default_str();
  cmd_->add_option("--width", gpt.width, "gpt: embedding width")->check(whole_number(1, 65536))->capture_default_str();
  cmd_->add_option("--context", gpt.context, "gpt: tokens (bytes) per window")->check(whole_number(1, 65536))->capture_default_str();
  cmd_->add_option("--steps", s.steps, "Global step to train to (a resumed run counts the steps already done; gpt: default 2000)")
      ->check(whole_number(1))
      ->capture_default_str();
  cmd_->add_option("--batch-size", s.batch_size, "Examples per step (gpt: windows per step, default 32)")
      ->check(whole_number(1, int64_t{1} << 24))
      ->capture_default_str();
  optimizer_options_.add_to(*cmd_);
  cmd_->add_option("--seed", s.seed, "Seed of initialisation and shuffling")->check(whole_number(0))->capture_default_str();
  cmd_->add_option("--backend", backend_option_, "Execution backend")
      ->check(CLI::IsMember(backend_names()))
      ->capture_default_str();
  cmd_->add_option("--log-every", log_every_,
                   "Steps between progress records, and between plain progress lines unless "
                   "--log-step-count-steps is given (0: none)")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd_->add_option("--eval-every", eval_every_,
                   "Evaluate on the test set (gpt: the validation split) every N steps (0: only at the end); writes no "
                   "extra checkpoints")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd_->add_option("--train-limit", s.train_limit, "Use only the first N training examples (0: all)")
      ->check(whole_number(0));
  cmd_->add_option("--test-limit", s.test_limit,
                   "Evaluate on only the first N test examples (gpt: validation windows) (0: all)")
      ->check(whole_number(0));
  cmd_->add_option("--final-loss", final_loss_,
                   "accelerate_train_mode's loss split: the loss the run is expected to end at (the switch comes"
                   " when the loss falls to RATIO times it)")
      ->check(positive_real());
  cmd_->add_option("--metrics-out", metrics_out_, "Write JSON Lines metrics to this file");
  cmd_->add_option("--report", report_out_, "At the end, write an HTML report of this run to this file (see kiln report)");
  cmd_->add_flag("--quiet,-q", quiet_, "Print only the final summary and errors");
  cmd_->add_flag("--dry-run", dry_run_,
                 "Validate the whole configuration, print the effective settings and exit (0 if valid, 2 if not)");
  add_run_config_options(*cmd_, config_);
}

TrainCommand::~TrainCommand() = default;

int TrainCommand::run() {
  const World& world = World::get();
  if (world.rank() != 0) mute_output();
  const ParsedRunConfig parsed = resolve_settings();
  if (dry_run_) {
    std::printf("%s%s", banner().c_str(), describe(config_, parsed, settings_.steps).c_str());
    std::printf("configuration is valid (dry run: nothing trained)\n");
    return 0;
  }
  if (config_.num_threads > 0) omp_set_num_threads(config_.num_threads);
  else if (world.distributed()) omp_set_num_threads(world.default_threads());  // the host's cores shared
  if (!report_out_.empty()) {
    std::vector<std::string> written;  // what this run writes records to
    if (!metrics_out_.empty()) written.push_back(metrics_out_);
    if (!config_.model_dir.empty()) written.push_back(summary_path(config_.model_dir));
    check_report_path(report_out_, written);
  }
  metrics_ = std::make_shared<MetricsWriter>(metrics_out_);
  if (!report_out_.empty()) metrics_->keep_records();
  const TrainData data = recipe_->load(settings_);
  // One run per model directory, for the whole run: training, evaluations and the report
  // (taken once the data is known good, so bad data leaves no directory behind).
  // In a data-parallel job, rank 0 holds it for the job (it alone writes there).
  const auto model_dir_lock =
      config_.model_dir.empty() || world.rank() != 0 ? nullptr : ModelDirLock::acquire(config_.model_dir);
  // Built once the data is loaded: gpt's vocabulary is part of its model and run settings.
  const std::unique_ptr<Estimator> est = make_estimator(model_dir_lock);
  train(*est, data);
  const int status = totals_.st.interrupted ? report_interrupted() : (report_final(*est, data), 0);
  if (!report_out_.empty()) write_run_report(metrics_->records(), run_label(est->parsed_config()), report_out_);
  return status;
}

ParsedRunConfig TrainCommand::resolve_settings() {
  config_.random_seed = static_cast<uint64_t>(settings_.seed);
  settings_.world_size = World::get().size();
  backend_ = parse_backend(backend_option_);
  recipe_ = make_recipe(settings_.model);
  const OptionGiven option_given = [this](std::string_view o) { return given(o); };
  recipe_->apply_defaults(settings_, option_given);
  recipe_->check(settings_, option_given);
  optimizer_ = optimizer_options_.resolve(recipe_->optimizer(), settings_.steps);
  const ParsedRunConfig parsed = config_.validate();  // the Estimator validates the same again
  check_options(parsed);
  recipe_->check_data(settings_, dry_run_);
  check_model_dir_path(config_.model_dir);
  return parsed;
}

void TrainCommand::check_options(const ParsedRunConfig& parsed) const {
  const std::optional<AccelerateTrainMode>& accel = parsed.accelerate_train_mode;
  if (accel && accel->split == AccelerateTrainMode::Split::loss && !(final_loss_ > 0))
    KILN_THROW(ConfigError) << "[final_loss] accelerate_train_mode '" << accel->to_string()
                            << "' switches when the loss falls to " << accel->ratio
                            << " x the final loss: give --final-loss, the loss this run is expected to end at";
  if (given("--save-summary-steps") && config_.save_summary_steps > 0 && config_.model_dir.empty())
    KILN_THROW(ConfigError) << "[save_summary_steps] summaries are written to the model directory: give --model-dir DIR"
                               " (or --metrics-out FILE for records without one)";
  const int ranks = settings_.world_size;
  if (settings_.batch_size % ranks != 0)
    KILN_THROW(ConfigError) << "[batch_size] '" << settings_.batch_size << "' does not split evenly over the job's "
                            << ranks << " ranks (it is the global batch): give a multiple of " << ranks;
  if (given("--all-reduce-overlap") && ranks < 2)
    KILN_THROW(ConfigError) << "[all_reduce_overlap] overlaps the gradient sums of a data-parallel job, and this "
                               "process is alone; run it under mpirun -np N (N >= 2), or leave the option out";
  if (given("--all-reduce-bucket-size") && ranks < 2)
    KILN_THROW(ConfigError) << "[all_reduce_bucket_bytes] sizes the gradient sums of a data-parallel job, and this "
                               "process is alone; run it under mpirun -np N (N >= 2), or leave the option out";
}

std::string TrainCommand::run_label(const ParsedRunConfig& parsed) const {
  return settings_.model + " " + (parsed.accelerate_train_mode ? parsed.accelerate_train_mode->to_string() : "original");
}

std::unique_ptr<Estimator> TrainCommand::make_estimator(std::shared_ptr<ModelDirLock> model_dir_lock) {
  EstimatorOptions eo;
  eo.model_dir_lock = std::move(model_dir_lock);
  eo.backend = backend_;
  eo.log = quiet_ ? nullptr : &std::cout;
  eo.interrupt = interrupt_requested();
  eo.on_precision_switch = [this](const PrecisionSwitchEvent& e) { on_precision_switch(e); };
  eo.records = metrics_;  // --metrics-out: the Estimator's records, progress every --log-every steps
  eo.records_every = log_every_;
  eo.run_settings = run_settings();
  // What decides the collectives of the whole run besides training itself: evaluations
  // inside it and at its end (every rank evaluates its share).
  eo.job_settings = run_settings();
  eo.job_settings.update(nlohmann::json{{"--model", settings_.model},
                                        {"--eval-every", eval_every_},
                                        {"--test-limit", settings_.test_limit},
                                        {"--data", settings_.data}});
  RunConfig cfg = config_;
  cfg.log_step_count_steps = 0;  // the progress hook does the logging (it honours the option)
  Params params{{"model", settings_.model},  // for the summaries (and reports)
                {"batch_size", static_cast<double>(settings_.batch_size)}};
  set_optimizer_params(params, optimizer_);
  return std::make_unique<Estimator>(recipe_->model_fn(settings_), cfg, params, eo);
}

nlohmann::json TrainCommand::run_settings() const {
  nlohmann::json j = {{"--seed", settings_.seed},
                      {"--batch-size", settings_.batch_size},
                      {"--learning-rate", optimizer_.learning_rate},
                      {"--optimizer", optimizer_.describe()},
                      {"--train-limit", settings_.train_limit}};
  j.update(recipe_->run_settings(settings_));
  return j;
}

std::string TrainCommand::banner() const {
  char text[512];
  std::snprintf(text, sizeof text, "kiln train: model %s, %lld steps, batch %lld, %s, seed %lld, backend %s, %d threads\n",
                recipe_->describe(settings_).c_str(), static_cast<long long>(settings_.steps),
                static_cast<long long>(settings_.batch_size), optimizer_.describe().c_str(),
                static_cast<long long>(settings_.seed), std::string(backend_name(backend_)).c_str(),
                config_.num_threads > 0 ? config_.num_threads : omp_get_max_threads());
  return text;
}

void TrainCommand::on_precision_switch(const PrecisionSwitchEvent& e) {
  progress_->finish_line();
  // Evaluations inside the step loop are not training time.
  const double seconds = e.seconds - (evals_ ? evals_->seconds() : 0);
  const std::string from(precision_phase_name(e.low_phase));
  say("precision switch: %s -> original at step %lld (requested %lld, %s), loss %.4f, %.1fs into training\n",
      from.c_str(), static_cast<long long>(e.step), static_cast<long long>(e.requested_step),
      e.reason_text().c_str(), e.loss, seconds);
}

void TrainCommand::count_evaluation(const Evaluation& ev) {
  totals_.compile_s += ev.compile_seconds;
  totals_.eval_s += ev.seconds - ev.compile_seconds;
}

HookList TrainCommand::hooks(Estimator& est, const TrainData& data) {
  // Plain progress lines follow --log-step-count-steps when it is given, else --log-every.
  ProgressHook::Options po;
  po.log_every = log_every_;
  po.live = ::isatty(STDOUT_FILENO) == 1;
  po.quiet = quiet_;
  if (given("--log-step-count-steps")) po.line_every = config_.log_step_count_steps;
  progress_ = std::make_shared<ProgressHook>(po);
  HookList hooks{progress_};
  if (eval_every_ > 0) {
    const std::string split = recipe_->eval_split();
    evals_ = std::make_shared<EvalHook>(est, data.eval_input, eval_every_, interrupt_requested(),
                                        [this, split](int64_t step, const Evaluation& ev) {
                                          count_evaluation(ev);
                                          progress_->finish_line();
                                          say("eval at step %lld: %s loss %.4f, %s accuracy %.4f\n",
                                              static_cast<long long>(step), split.c_str(), ev.at("loss"),
                                              split.c_str(), ev.at("accuracy"));
                                        });
    hooks.push_back(evals_);
  }
  // accelerate_train_mode: the CLI tells the switch where training is.
  if (const auto& accel = est.parsed_config().accelerate_train_mode) {
    if (accel->split == AccelerateTrainMode::Split::step)
      hooks.push_back(std::make_shared<TellMeStepOrLossHook>("global_step", settings_.steps));
    else
      hooks.push_back(TellMeStepOrLossHook::loss("loss", final_loss_, settings_.steps));
  }
  return hooks;
}

void TrainCommand::train(Estimator& est, const TrainData& data) {
  say("%s", banner().c_str());
  say("%s", data.summary.c_str());
  if (!config_.experimental_config.graph_compiler_cache_dir.empty() && backend_ == Backend::interp)
    say("note: backend interp compiles nothing, so graph_compiler_cache_dir is not used\n");
  const HookList all = hooks(est, data);
  {
    // Ctrl-C: the first one asks the Estimator to stop after the current step (it then
    // writes the checkpoint); a second one kills the process the usual way.
    const CatchInterrupts catching;
    totals_.st = est.train(data.train_input, settings_.steps, all);
  }
  totals_.compile_s += totals_.st.compile_seconds;
  totals_.train_s = totals_.st.train_seconds - (evals_ ? evals_->seconds() : 0);
}

void TrainCommand::mute_output() {
  // Ranks other than 0 print only errors (on stderr, prefixed by their rank) and write no
  // metrics or report: rank 0 speaks for the job.
  quiet_ = true;
  metrics_out_.clear();
  report_out_.clear();
  if (!std::freopen("/dev/null", "w", stdout))
    KILN_THROW(Error) << "[mpi] " << World::get().prefix() << "cannot silence standard output: " << std::strerror(errno);
}

}  // namespace kiln::cli
