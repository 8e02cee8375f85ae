#include "train_command.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <iostream>

#include <omp.h>

#include <nlohmann/json.hpp>

#include "kiln/backend.h"
#include "kiln/cpu_features.h"
#include "kiln/error.h"
#include "kiln/interrupts.h"
#include "kiln/model_dir_lock.h"
#include "kiln/models.h"
#include "kiln/optimizer_params.h"
#include "backend/memory_check.h"
#include "kiln/summary.h"
#include "kiln/text_data.h"
#include "kiln/world.h"

// CLI-private headers, beside this file (not under the public kiln/ prefix).
#include "accelerate_summary.h"
#include "eval_hook.h"
#include "input_checks.h"
#include "metrics_writer.h"
#include "option_checks.h"
#include "optimizer_options.h"
#include "progress_hook.h"
#include "report_command.h"
#include "run_config_options.h"

namespace kiln::cli {

struct TrainCommand::Data {
  std::shared_ptr<const data::Dataset> train, test;  // mlp, cnn (gpt's windows come from its text)
  InputFn train_input, test_input;
  std::string summary;  // the "data: ..." line
};

TrainCommand::TrainCommand(CLI::App& parent) {
  backend_ = default_backend();
  cmd_ = parent.add_subcommand("train",
                               "Train a model and evaluate it: mlp or cnn on Fashion-MNIST (test set), gpt on a text "
                               "(validation split: its last 10%)");
  std::vector<std::string> models = model_names();
  models.push_back(kGptModelName);
  cmd_->add_option("--model", model_, "Model to train")->check(CLI::IsMember(models))->capture_default_str();
  cmd_->add_option("--data", data_dir_,
                   "mlp, cnn: directory holding the Fashion-MNIST IDX files; gpt: a UTF-8 text file or a folder of them "
                   "(default " + std::string(data::kDefaultFortunesDir) + ")")
      ->capture_default_str();
  cmd_->add_option("--layers", gpt_.layers, "gpt: transformer blocks")->check(whole_number(1, 256))->capture_default_str();
  cmd_->add_option("--heads", gpt_.heads, "gpt: attention heads (must divide --width)")
      ->check(whole_number(1, 1024))
      ->capture_default_str();
  cmd_->add_option("--width", gpt_.width, "gpt: embedding width")->check(whole_number(1, 65536))->capture_default_str();
  cmd_->add_option("--context", gpt_.context, "gpt: tokens (bytes) per window")->check(whole_number(1, 65536))->capture_default_str();
  cmd_->add_option("--steps", steps_, "Global step to train to (a resumed run counts the steps already done; gpt: default 2000)")
      ->check(whole_number(1))
      ->capture_default_str();
  cmd_->add_option("--batch-size", batch_size_, "Examples per step (gpt: windows per step, default 32)")
      ->check(whole_number(1, int64_t{1} << 24))
      ->capture_default_str();
  optimizer_options_.add_to(*cmd_);
  cmd_->add_option("--seed", seed_, "Seed of initialisation and shuffling")->check(whole_number(0))->capture_default_str();
  cmd_->add_option("--backend", backend_, "Execution backend")
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
  cmd_->add_option("--train-limit", train_limit_, "Use only the first N training examples (0: all)")
      ->check(whole_number(0));
  cmd_->add_option("--test-limit", test_limit_,
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
  config_.random_seed = static_cast<uint64_t>(seed_);
  const World& world = World::get();
  if (world.rank() != 0) mute_output();
  if (is_gpt()) {
    GptShape check = gpt_;
    check.vocabulary = 1;  // known once the text is read
    validate(check);
    // gpt's own defaults for the options it shares with the classifiers.
    if (cmd_->count("--data") == 0) data_dir_ = data::kDefaultFortunesDir;
    if (cmd_->count("--batch-size") == 0) batch_size_ = 32;
    // Before any work (also in a dry run): a model the machine cannot hold is refused.
    const double bytes = gpt_training_bytes(check, batch_size_ / std::max(world.size(), 1));
    check_fits_in_memory(bytes > 9e18 ? int64_t{9000000000000000000} : static_cast<int64_t>(bytes),
                         "training gpt (--layers, --width, --context, --batch-size)");
    if (cmd_->count("--steps") == 0) steps_ = 2000;
    if (cmd_->count("--train-limit") > 0)
      KILN_THROW(ConfigError) << "[train_limit] counts Fashion-MNIST examples; for gpt give --data a shorter text";
    eval_split_ = "validation";
  } else {
    for (const char* o : {"--layers", "--heads", "--width", "--context"})
      if (cmd_->count(o) > 0) KILN_THROW(ConfigError) << "[" << (o + 2) << "] is an option of --model gpt, not " << model_;
  }
  optimizer_ = optimizer_options_.resolve(default_optimizer(model_), steps_);
  std::unique_ptr<Estimator> est = make_estimator();  // validates: the run's one parse of its configuration
  check_final_loss(est->parsed_config().accelerate_train_mode);
  if (cmd_->count("--save-summary-steps") > 0 && config_.save_summary_steps > 0 && config_.model_dir.empty())
    KILN_THROW(ConfigError) << "[save_summary_steps] summaries are written to the model directory: give --model-dir DIR"
                               " (or --metrics-out FILE for records without one)";
  if (is_gpt()) {
    check_model_dir_path(config_.model_dir);
    if (dry_run_) load_text_data();  // the text must be readable UTF-8
  } else {
    check_train_paths(data_dir_, config_.model_dir);
  }
  if (batch_size_ % world.size() != 0)
    KILN_THROW(ConfigError) << "[batch_size] '" << batch_size_ << "' does not split evenly over the job's "
                            << world.size() << " ranks (it is the global batch): give a multiple of " << world.size();
  if (cmd_->count("--all-reduce-bucket-size") > 0 && !world.distributed())
    KILN_THROW(ConfigError) << "[all_reduce_bucket_bytes] sizes the gradient sums of a data-parallel job, and this "
                               "process is alone; run it under mpirun -np N (N >= 2), or leave the option out";
  if (dry_run_) {
    std::printf("%s%s", banner().c_str(), describe(config_, est->parsed_config(), steps_).c_str());
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
  metrics_ = std::make_unique<MetricsWriter>(metrics_out_);
  if (!report_out_.empty()) metrics_->keep_records();
  const Data data = load_data();
  // One run per model directory, for the whole run: training, evaluations and the report
  // (taken once the data is known good, so bad data leaves no directory behind).
  // In a data-parallel job, rank 0 holds it for the job (it alone writes there).
  const auto model_dir_lock =
      config_.model_dir.empty() || world.rank() != 0 ? nullptr : ModelDirLock::acquire(config_.model_dir);
  // Again: training under this run's lock (gpt: with the text's vocabulary in the run settings).
  est = make_estimator(model_dir_lock);
  train(*est, data);
  const int status = totals_.st.interrupted ? report_interrupted() : (report_final(*est, data), 0);
  if (!report_out_.empty()) write_run_report(metrics_->records(), run_label(est->parsed_config()), report_out_);
  return status;
}

std::string TrainCommand::run_label(const ParsedRunConfig& parsed) const {
  return model_ + " " + (parsed.accelerate_train_mode ? parsed.accelerate_train_mode->to_string() : "original");
}

std::unique_ptr<Estimator> TrainCommand::make_estimator(std::shared_ptr<ModelDirLock> model_dir_lock) {
  EstimatorOptions eo;
  eo.model_dir_lock = std::move(model_dir_lock);
  eo.backend = backend_;
  eo.log = quiet_ ? nullptr : &std::cout;
  eo.interrupt = interrupt_requested();
  eo.on_precision_switch = [this](const PrecisionSwitchEvent& e) { on_precision_switch(e); };
  eo.run_settings = run_settings();
  // What decides the collectives of the whole run besides training itself: evaluations
  // inside it and at its end (every rank evaluates its share).
  eo.job_settings = run_settings();
  eo.job_settings.update(nlohmann::json{{"--model", model_}, {"--eval-every", eval_every_}, {"--test-limit", test_limit_},
                                        {"--data", data_dir_}});
  RunConfig cfg = config_;
  cfg.log_step_count_steps = 0;  // the progress hook does the logging (it honours the option)
  Params params{{"model", model_},  // for the summaries (and reports)
                {"batch_size", static_cast<double>(batch_size_)}};
  set_optimizer_params(params, optimizer_);
  return std::make_unique<Estimator>(model_fn(), cfg, params, eo);
}

nlohmann::json TrainCommand::optimizer_record() const {
  const OptimizerSettings& o = optimizer_;
  nlohmann::json r = {{"optimizer", o.name},
                      {"learning_rate", o.learning_rate},
                      {"batch_size", batch_size_},
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

nlohmann::json TrainCommand::run_settings() const {
  nlohmann::json j = {{"--seed", seed_},
                      {"--batch-size", batch_size_},
                      {"--learning-rate", optimizer_.learning_rate},
                      {"--optimizer", optimizer_.describe()},
                      {"--train-limit", train_limit_}};
  if (!is_gpt()) return j;
  // What `kiln sample` needs to rebuild the model and spell its tokens.
  j["--model"] = model_;
  j["--layers"] = gpt_.layers;
  j["--heads"] = gpt_.heads;
  j["--width"] = gpt_.width;
  j["--context"] = gpt_.context;
  j["vocabulary"] = data::vocabulary_to_hex(text_vocabulary_);
  return j;
}

ModelFn TrainCommand::model_fn() {
  if (!is_gpt()) return classifier_model_fn(make_model(model_, seed_));
  // The vocabulary is known once the text is read (before any graph is built).
  return [this](const Tensor& x, const Tensor& y, ModeKeys mode, const Params& p) {
    GptShape shape = gpt_;
    shape.vocabulary = static_cast<int64_t>(text_vocabulary_.size());
    return gpt_model_fn(shape, seed_)(x, y, mode, p);
  };
}

void TrainCommand::check_final_loss(const std::optional<AccelerateTrainMode>& accel) const {
  if (accel && accel->split == AccelerateTrainMode::Split::loss && !(final_loss_ > 0))
    KILN_THROW(ConfigError) << "[final_loss] accelerate_train_mode '" << accel->to_string()
                            << "' switches when the loss falls to " << accel->ratio
                            << " x the final loss: give --final-loss, the loss this run is expected to end at";
}

template <class... Args>
void TrainCommand::say(const char* fmt, Args... args) const {
  if (quiet_) return;
  std::printf(fmt, args...);
  std::fflush(stdout);
}

std::string TrainCommand::banner() const {
  char text[512];
  const std::string model =
      is_gpt() ? model_ + " (" + std::to_string(gpt_.layers) + " layers, " + std::to_string(gpt_.heads) + " heads, width " +
                     std::to_string(gpt_.width) + ", context " + std::to_string(gpt_.context) + ")"
               : model_;
  std::snprintf(text, sizeof text, "kiln train: model %s, %lld steps, batch %lld, %s, seed %lld, backend %s, %d threads\n",
                model.c_str(), static_cast<long long>(steps_), static_cast<long long>(batch_size_),
                optimizer_.describe().c_str(), static_cast<long long>(seed_), backend_.c_str(),
                config_.num_threads > 0 ? config_.num_threads : omp_get_max_threads());
  return text;
}

TrainCommand::Data TrainCommand::load_text_data() {
  const data::TextCorpus corpus = data::load_text_corpus(data_dir_);
  text_vocabulary_ = corpus.vocabulary;
  data::TextSplit split = data::split_tokens(corpus.tokens, 0.9);
  auto train = std::make_shared<const std::vector<int32_t>>(std::move(split.train));
  auto validation = std::make_shared<const std::vector<int32_t>>(std::move(split.validation));
  const auto seed = static_cast<uint64_t>(seed_);
  // Validation batches have the training batch's size: the eval graph is as small as the step's.
  const int64_t batch = batch_size_, eval_batch = batch_size_, context = gpt_.context, limit = test_limit_;
  // Made once here so that a text too short for one window fails before anything is built.
  data::random_windows(train, batch, context, seed);
  data::consecutive_windows(validation, eval_batch, context, limit);
  Data d;
  d.train_input = [train, seed, batch, context] {
    return data::prefetch(data::random_windows(train, batch, context, seed));
  };
  d.test_input = [validation, eval_batch, context, limit] {
    return data::prefetch(data::consecutive_windows(validation, eval_batch, context, limit));
  };
  char line[512];
  std::snprintf(line, sizeof line,
                "data: %zu bytes from %zu file(s) in %s, vocabulary %zu bytes; %zu training and %zu validation tokens\n",
                corpus.text.size(), corpus.files.size(), data_dir_.c_str(), corpus.vocabulary.size(), train->size(),
                validation->size());
  d.summary = line;
  return d;
}

TrainCommand::Data TrainCommand::load_data() {
  if (is_gpt()) return load_text_data();
  auto train_set = std::make_shared<data::Dataset>(data::load_fashion_mnist(data_dir_, data::Split::train));
  auto test_all = data::load_fashion_mnist(data_dir_, data::Split::test);
  if (test_limit_ > 0 && test_limit_ < test_all.size()) test_all = data::take(test_all, test_limit_);
  if (train_limit_ > 0 && train_limit_ < train_set->size()) *train_set = data::take(*train_set, train_limit_);
  check_image_size(model_, data_dir_, *train_set, test_all);
  if (batch_size_ > train_set->size())
    KILN_THROW(ConfigError) << "[batch_size] '" << batch_size_ << "' exceeds the " << train_set->size()
                            << " training examples";
  Data d;
  d.train = train_set;
  d.test = std::make_shared<const data::Dataset>(std::move(test_all));
  const auto seed = static_cast<uint64_t>(seed_);
  const int64_t batch = batch_size_, eval_batch = eval_batch_size_;
  d.train_input = [train = d.train, seed, batch] {
    return data::prefetch(data::batches(train, data::BatcherOptions::training(batch, seed)));
  };
  d.test_input = [test = d.test, eval_batch] {
    return data::prefetch(data::batches(test, data::BatcherOptions::evaluation(eval_batch)));
  };
  char line[512];
  std::snprintf(line, sizeof line, "data: %lld training and %lld test examples from %s\n",
                static_cast<long long>(d.train->size()), static_cast<long long>(d.test->size()), data_dir_.c_str());
  d.summary = line;
  return d;
}

void TrainCommand::on_precision_switch(const PrecisionSwitchEvent& e) {
  progress_->finish_line();
  // Evaluations inside the step loop are not training time.
  const double seconds = e.seconds - (evals_ ? evals_->seconds() : 0);
  const std::string from(precision_phase_name(e.low_phase));
  say("precision switch: %s -> original at step %lld (requested %lld, %s), loss %.4f, %.1fs into training\n",
      from.c_str(), static_cast<long long>(e.step), static_cast<long long>(e.requested_step),
      e.reason_text().c_str(), e.loss, seconds);
  metrics_->write(precision_switch_record(e, seconds));
}

void TrainCommand::count_evaluation(const Evaluation& ev) {
  totals_.compile_s += ev.compile_seconds;
  totals_.eval_s += ev.seconds - ev.compile_seconds;
}

HookList TrainCommand::hooks(Estimator& est, const Data& data) {
  // Plain progress lines follow --log-step-count-steps when it is given, else --log-every.
  const bool lines_given = cmd_->count("--log-step-count-steps") > 0;
  ProgressHook::Options po{log_every_, ::isatty(STDOUT_FILENO) == 1, quiet_};
  if (lines_given) po.line_every = config_.log_step_count_steps;
  po.learning_rate = [o = optimizer_](int64_t step) { return learning_rate_at(o.learning_rate, o.schedule, step); };
  progress_ = std::make_shared<ProgressHook>(po, [this](const nlohmann::json& r) { metrics_->write(r); });
  HookList hooks{progress_};
  if (eval_every_ > 0) {
    evals_ = std::make_shared<EvalHook>(est, data.test_input, eval_every_, interrupt_requested(),
                                        [this](int64_t step, const Evaluation& ev) {
                                          count_evaluation(ev);
                                          progress_->finish_line();
                                          say("eval at step %lld: %s loss %.4f, %s accuracy %.4f\n",
                                              static_cast<long long>(step), eval_split_.c_str(), ev.at("loss"),
                                              eval_split_.c_str(), ev.at("accuracy"));
                                          metrics_->write({{"event", "eval"},
                                                           {"step", step},
                                                           {"test_loss", ev.at("loss")},
                                                           {"test_accuracy", ev.at("accuracy")}});
                                        });
    hooks.push_back(evals_);
  }
  // accelerate_train_mode: the CLI tells the switch where training is.
  if (const auto& accel = est.parsed_config().accelerate_train_mode) {
    if (accel->split == AccelerateTrainMode::Split::step)
      hooks.push_back(std::make_shared<TellMeStepOrLossHook>("global_step", steps_));
    else
      hooks.push_back(TellMeStepOrLossHook::loss("loss", final_loss_, steps_));
  }
  return hooks;
}

void TrainCommand::train(Estimator& est, const Data& data) {
  say("%s", banner().c_str());
  say("%s", data.summary.c_str());
  if (!config_.experimental_config.graph_compiler_cache_dir.empty() && backend_ == "interp")
    say("note: backend %s compiles nothing, so graph_compiler_cache_dir is not used\n", backend_.c_str());
  const HookList all = hooks(est, data);
  {
    // Ctrl-C: the first one asks the Estimator to stop after the current step (it then
    // writes the checkpoint); a second one kills the process the usual way.
    const CatchInterrupts catching;
    totals_.st = est.train(data.train_input, steps_, all);
  }
  totals_.compile_s += totals_.st.compile_seconds;
  totals_.train_s = totals_.st.train_seconds - (evals_ ? evals_->seconds() : 0);
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

void TrainCommand::mute_output() {
  // Ranks other than 0 print only errors (on stderr, prefixed by their rank) and write no
  // metrics or report: rank 0 speaks for the job.
  quiet_ = true;
  metrics_out_.clear();
  report_out_.clear();
  if (!std::freopen("/dev/null", "w", stdout))
    KILN_THROW(Error) << "[mpi] " << World::get().prefix() << "cannot silence standard output: " << std::strerror(errno);
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
  const TrainStats& st = totals_.st;
  const std::vector<double> switches =
      by_rank(st.accelerate && st.accelerate->switch_step ? static_cast<double>(*st.accelerate->switch_step) : -1);
  nlohmann::json per_rank = nlohmann::json::array(), switch_steps = nlohmann::json::array();
  for (size_t r = 0; r < hits.size(); ++r) {
    per_rank.push_back({{"rank", r}, {"graphs", static_cast<int64_t>(graphs[r])}, {"cache_hits", static_cast<int64_t>(hits[r])}});
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
                             {"compile_by_rank", per_rank},
                             {"switch_step_by_rank", switch_steps}};
  std::printf("data parallel: %d ranks x %d threads; %.2fs in collectives (%.0f%% of training), %lld bytes reduced"
              " per step in %.1f MPI_Allreduce calls\n",
              world.size(), omp_get_max_threads(), st.collective_seconds, 100 * share,
              static_cast<long long>(per_step), calls_per_step);
}

void TrainCommand::report_final(Estimator& est, const Data& data) {
  const Evaluation ev = est.evaluate(data.test_input);
  count_evaluation(ev);
  const TrainStats& st = totals_.st;
  const double compile_s = totals_.compile_s, train_s = totals_.train_s, eval_s = totals_.eval_s;
  const double rate = train_s > 0 ? static_cast<double>(st.steps) / train_s : 0;
  const double throughput = rate * static_cast<double>(batch_size_);
  const std::string resumed = " (" + std::to_string(st.steps) + " this run, resumed at " +
                              std::to_string(st.start_step) + ")";
  std::printf("done: %lld steps%s in %.1fs (compile %.1fs, train %.1fs, eval %.1fs); %.1f steps/s, %.0f examples/s; "
              "final loss %.4f, %s loss %.4f, %s accuracy %.4f\n",
              static_cast<long long>(st.global_step), st.resumed ? resumed.c_str() : "",
              compile_s + train_s + eval_s, compile_s, train_s, eval_s, rate, throughput, st.final_loss,
              eval_split_.c_str(), ev.at("loss"), eval_split_.c_str(), ev.at("accuracy"));
  AccelerateTotals accel;
  if (st.accelerate) {
    accel.add(*st.accelerate);
    std::printf("%s", accel.summary().c_str());
  }
  const CompileSummary& cs = est.compile_summary();
  const double compile_total = cs.passes_seconds + cs.codegen_seconds + cs.compile_seconds + cs.load_seconds;
  if (cs.interpreter_fallbacks > 0)
    std::printf("compile: native compilation failed for %d of %d graphs; they ran on the interpreter\n",
                cs.interpreter_fallbacks, cs.graphs);
  else if (backend_ == "cpu")
    std::printf("compile: cache %s (%d of %d graphs loaded from the cache); %.3fs = passes %.3fs, codegen %.3fs, "
                "c++ %.3fs, load %.3fs\n",
                std::string(cache_outcome_name(cs.cache())).c_str(), cs.cache_hits, cs.graphs, compile_total, cs.passes_seconds, cs.codegen_seconds,
                cs.compile_seconds, cs.load_seconds);
  nlohmann::json record = {{"event", "final"},
                           {"steps", st.global_step},
                           {"steps_this_run", st.steps},
                           {"resumed_from_step", st.resumed ? st.start_step : 0},
                           {"train_seconds", train_s},
                           {"compile_seconds", compile_s},
                           {"eval_seconds", eval_s},
                           {"steps_per_second", rate},
                           {"examples_per_second", throughput},
                           {"final_loss", st.final_loss},
                           {"test_loss", ev.at("loss")},
                           {"test_accuracy", ev.at("accuracy")},
                           {"test_examples", ev.examples},
                           {"model", model_},
                           {"backend", backend_},
                           {"threads", omp_get_max_threads()},
                           {"compile_cache", cache_outcome_name(cs.cache())},
                           {"compile", compile_record(cs)},
                           // What `kiln report` shows beside the numbers:
                           {"kiln_version", KILN_VERSION},
                           {"cpu", cpu_features().model},
                           {"isa", cpu_features().isa()},
                           {"config",
                            {{"precision_mode", config_.precision_mode},
                             {"precision_mode_v2", config_.precision_mode_v2},
                             {"accelerate_train_mode", config_.experimental_config.accelerate_train_mode},
                             {"iterations_per_loop", config_.iterations_per_loop}}},
                           {"params", optimizer_record()}};
  if (is_gpt())
    record["gpt"] = {{"layers", gpt_.layers}, {"heads", gpt_.heads}, {"width", gpt_.width}, {"context", gpt_.context},
                     {"vocabulary", text_vocabulary_.size()}, {"eval_split", eval_split_}};
  if (st.accelerate) record["accelerate"] = accel.to_json();
  add_world_record(record, cs);
  if (cs.interpreter_fallbacks > 0) {
    // What ran, not what was asked for.
    record["backend"] = cs.interpreter_fallbacks == cs.graphs ? "interp" : "cpu+interp";
    record["backend_requested"] = backend_;
    record["interpreter_fallbacks"] = cs.interpreter_fallbacks;
  }
  metrics_->write(record);
  if (!std::isfinite(ev.at("loss")))
    KILN_THROW(Error) << "[evaluate] the test loss is " << ev.at("loss") << " after " << st.global_step
                      << " steps: the model diverged (the weights are not finite); try a smaller --learning-rate";
}

}  // namespace kiln::cli
