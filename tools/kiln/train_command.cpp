#include "kiln/train_command.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <omp.h>

#include <nlohmann/json.hpp>

#include "kiln/accelerate_summary.h"
#include "kiln/backend.h"
#include "kiln/error.h"
#include "kiln/estimator.h"
#include "kiln/model_dir_lock.h"
#include "kiln/models.h"
#include "kiln/progress_hook.h"
#include "kiln/run_config_options.h"

namespace kiln::cli {
namespace {

// JSON Lines records. The file is created at the first record, so a run that fails on
// bad input overwrites nothing; whether it can be created is checked up front.
class MetricsWriter {
 public:
  explicit MetricsWriter(std::string path) : path_(std::move(path)) {
    if (path_.empty()) return;
    const auto parent = std::filesystem::path(path_).parent_path();
    const std::string dir = parent.empty() ? "." : parent.string();
    if (::access(dir.c_str(), W_OK) != 0 || std::filesystem::is_directory(path_))
      KILN_THROW(ConfigError) << "[metrics_out] cannot write '" << path_ << "': "
                              << (std::filesystem::is_directory(path_) ? "it is a directory" : std::strerror(errno));
  }
  void write(const nlohmann::json& record) {
    if (path_.empty()) return;
    if (!out_.is_open()) {
      out_.open(path_, std::ios::trunc);
      if (!out_)
        KILN_THROW(SystemError) << "[metrics_out] cannot open '" << path_ << "' for writing: " << std::strerror(errno);
    }
    out_ << record.dump() << "\n";
    out_.flush();
    if (const int err = errno; !out_)
      KILN_THROW(SystemError) << "[metrics_out] cannot write to '" << path_ << "': " << std::strerror(err);
  }

 private:
  std::string path_;
  std::ofstream out_;
};

// CLI11's numeric checks print the whole double range for a non-number; say it plainly.
CLI::Validator whole_number(int64_t min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        int64_t v = 0;
        const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
        if (r.ec != std::errc() || r.ptr != text.data() + text.size() || v < min)
          return "'" + text + "' is not a whole number >= " + std::to_string(min);
        return {};
      },
      "INT>=" + std::to_string(min));
}

CLI::Validator positive_real() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double v = 0;
        const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
        if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !(v > 0) || !std::isfinite(v))
          return "'" + text + "' is not a positive number";
        return {};
      },
      "REAL>0");
}

// Ctrl-C: the first one asks the Estimator to stop after the current step (it then writes
// the checkpoint); a second one kills the process the usual way.
std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) {
  g_interrupted.store(true);
  std::signal(SIGINT, SIG_DFL);
}

}  // namespace

TrainCommand::TrainCommand(CLI::App& parent) {
  backend_ = default_backend();
  cmd_ = parent.add_subcommand("train", "Train a model on Fashion-MNIST and evaluate it on the test set");
  cmd_->add_option("--model", model_, "Model to train")->check(CLI::IsMember(model_names()))->capture_default_str();
  cmd_->add_option("--data", data_dir_, "Directory holding the Fashion-MNIST IDX files")->capture_default_str();
  cmd_->add_option("--steps", steps_, "Global step to train to (a resumed run counts the steps already done)")
      ->check(whole_number(1))
      ->capture_default_str();
  cmd_->add_option("--batch-size", batch_size_, "Examples per step")->check(whole_number(1))->capture_default_str();
  cmd_->add_option("--learning-rate", learning_rate_, "Learning rate")->check(positive_real())->capture_default_str();
  cmd_->add_option("--optimizer", optimizer_, "Optimizer")
      ->check(CLI::IsMember({"sgd", "momentum", "adam"}))
      ->capture_default_str();
  cmd_->add_option("--seed", seed_, "Seed of initialisation and shuffling")->check(whole_number(0))->capture_default_str();
  cmd_->add_option("--backend", backend_, "Execution backend")
      ->check(CLI::IsMember(backend_names()))
      ->capture_default_str();
  cmd_->add_option("--log-every", log_every_, "Steps between progress records and plain progress lines (0: none)")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd_->add_option("--eval-every", eval_every_, "Evaluate on the test set every N steps (0: only at the end)")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd_->add_option("--train-limit", train_limit_, "Use only the first N training examples (0: all)")
      ->check(whole_number(0));
  cmd_->add_option("--test-limit", test_limit_, "Evaluate on only the first N test examples (0: all)")
      ->check(whole_number(0));
  cmd_->add_option("--final-loss", final_loss_,
                   "accelerate_train_mode's loss split: the loss the run is expected to end at (the switch comes"
                   " when the loss falls to RATIO times it)")
      ->check(positive_real());
  cmd_->add_option("--metrics-out", metrics_out_, "Write JSON Lines metrics to this file");
  cmd_->add_flag("--quiet,-q", quiet_, "Print only the final summary and errors");
  cmd_->add_flag("--dry-run", dry_run_,
                 "Validate the whole configuration, print the effective settings and exit (0 if valid, 2 if not)");
  add_run_config_options(*cmd_, config_);
}

int TrainCommand::run() {
  config_.random_seed = static_cast<uint64_t>(seed_);
  config_.validate();
  const auto accel = config_.experimental_config.parsed_accelerate_train_mode();
  if (accel && accel->split == AccelerateTrainMode::Split::loss && !(final_loss_ > 0))
    KILN_THROW(ConfigError) << "[final_loss] accelerate_train_mode '" << accel->to_string()
                            << "' switches when the loss falls to " << accel->ratio
                            << " x the final loss: give --final-loss, the loss this run is expected to end at";
  auto say = [&](const char* fmt, auto... args) {
    if (quiet_) return;
    std::printf(fmt, args...);
    std::fflush(stdout);
  };
  char banner[512];
  std::snprintf(banner, sizeof banner, "kiln train: model %s, %lld steps, batch %lld, %s lr %g, seed %lld, backend %s\n",
                model_.c_str(), static_cast<long long>(steps_), static_cast<long long>(batch_size_), optimizer_.c_str(),
                learning_rate_, static_cast<long long>(seed_), backend_.c_str());
  if (dry_run_) {
    std::printf("%s%s", banner, describe(config_, steps_).c_str());
    std::printf("configuration is valid (dry run: nothing trained)\n");
    return 0;
  }
  if (config_.num_threads > 0) omp_set_num_threads(config_.num_threads);
  MetricsWriter metrics(metrics_out_);
  auto train_set = std::make_shared<data::Dataset>(data::load_fashion_mnist(data_dir_, data::Split::train));
  auto test_all = data::load_fashion_mnist(data_dir_, data::Split::test);
  if (test_limit_ > 0 && test_limit_ < test_all.size()) test_all = data::take(test_all, test_limit_);
  auto test_set = std::make_shared<const data::Dataset>(std::move(test_all));
  if (train_limit_ > 0 && train_limit_ < train_set->size()) *train_set = data::take(*train_set, train_limit_);
  if (batch_size_ > train_set->size())
    KILN_THROW(ConfigError) << "[batch_size] '" << batch_size_ << "' exceeds the " << train_set->size()
                            << " training examples";
  say("%s", banner);
  say("data: %lld training and %lld test examples from %s\n", static_cast<long long>(train_set->size()),
      static_cast<long long>(test_set->size()), data_dir_.c_str());
  if (!config_.experimental_config.graph_compiler_cache_dir.empty() && backend_ == "interp")
    say("note: backend %s compiles nothing, so graph_compiler_cache_dir is not used\n", backend_.c_str());

  EstimatorOptions eo;
  eo.backend = backend_;
  eo.log = quiet_ ? nullptr : &std::cout;
  eo.interrupt = &g_interrupted;
  std::shared_ptr<ProgressHook> progress;  // set below, before training starts
  double loop_seconds_before = 0;          // step-loop time of the earlier train() calls
  eo.on_precision_switch = [&](const PrecisionSwitchEvent& e) {
    progress->finish_line();
    say("precision switch: %s -> original at step %lld (requested %lld, %s), loss %.4f, %.1fs into training\n",
        e.low_phase.c_str(), static_cast<long long>(e.step), static_cast<long long>(e.requested_step),
        e.reason.c_str(), e.loss, loop_seconds_before + e.seconds);
    metrics.write({{"event", "precision_switch"},
                   {"step", e.step},
                   {"requested_step", e.requested_step},
                   {"reason", e.reason},
                   {"loss", std::isfinite(e.loss) ? nlohmann::json(e.loss) : nlohmann::json()},
                   {"window_mean", std::isfinite(e.window_mean) ? nlohmann::json(e.window_mean) : nlohmann::json()},
                   {"seconds", loop_seconds_before + e.seconds},
                   {"from", e.low_phase}});
  };
  config_.log_step_count_steps = 0;  // the progress hook below does the logging
  // One run per model directory, for the whole run (train() calls and evaluations between).
  const auto model_dir_lock = config_.model_dir.empty() ? nullptr : ModelDirLock::acquire(config_.model_dir);
  Estimator est(classifier_model_fn(make_model(model_, seed_)), config_,
                Params{{"optimizer", optimizer_}, {"learning_rate", learning_rate_}}, eo);
  const std::shared_ptr<const data::Dataset> train_data = train_set;
  const auto seed = static_cast<uint64_t>(seed_);
  const int64_t batch = batch_size_, eval_batch = eval_batch_size_;
  const InputFn train_input = [train_data, seed, batch] {
    return data::prefetch(data::batches(train_data, data::BatcherOptions::training(batch, seed)));
  };
  const InputFn test_input = [test_set, eval_batch] {
    return data::prefetch(data::batches(test_set, data::BatcherOptions::evaluation(eval_batch)));
  };

  progress = std::make_shared<ProgressHook>(
      ProgressHook::Options{log_every_, ::isatty(STDOUT_FILENO) == 1, quiet_},
      [&metrics](const nlohmann::json& r) { metrics.write(r); });
  // accelerate_train_mode: the CLI tells the switch where training is.
  HookList hooks{progress};
  if (accel) {
    if (accel->split == AccelerateTrainMode::Split::step)
      hooks.push_back(std::make_shared<TellMeStepOrLossHook>("global_step", steps_));
    else
      hooks.push_back(TellMeStepOrLossHook::loss("loss", final_loss_, steps_));
  }
  std::signal(SIGINT, on_sigint);

  double compile_s = 0, train_s = 0, eval_s = 0, final_loss = NAN;
  int64_t run_steps = 0, start_step = -1, global = 0;
  bool resumed = false;
  TrainStats st;
  AccelerateTotals accel_totals;
  do {
    const int64_t target = eval_every_ > 0 ? std::min(steps_, (est.global_step() / eval_every_ + 1) * eval_every_) : steps_;
    st = est.train(train_input, target, hooks);
    loop_seconds_before += st.train_seconds;
    if (st.accelerate) accel_totals.add(*st.accelerate);
    if (start_step < 0) {
      start_step = st.start_step;
      resumed = st.resumed;
    }
    compile_s += st.compile_seconds;
    train_s += st.train_seconds;
    run_steps += st.steps;
    global = st.global_step;
    if (st.steps > 0) final_loss = st.final_loss;
    if (st.interrupted || st.stopped_by_hook) break;
    if (eval_every_ > 0 && global < steps_ && st.steps > 0) {
      const Evaluation ev = est.evaluate(test_input);
      compile_s += ev.compile_seconds;
      eval_s += ev.seconds - ev.compile_seconds;
      progress->finish_line();
      say("eval at step %lld: test loss %.4f, test accuracy %.4f\n", static_cast<long long>(global), ev.at("loss"),
          ev.at("accuracy"));
      metrics.write({{"event", "eval"},
                     {"step", global},
                     {"test_loss", ev.at("loss")},
                     {"test_accuracy", ev.at("accuracy")}});
    }
  } while (global < steps_ && st.steps > 0);
  std::signal(SIGINT, SIG_DFL);

  if (st.interrupted) {
    progress->finish_line();
    std::printf("interrupted at step %lld%s\n", static_cast<long long>(global),
                config_.model_dir.empty() ? " (no --model-dir: nothing saved)"
                                          : ("; checkpoint saved in " + config_.model_dir).c_str());
    metrics.write({{"event", "interrupted"}, {"step", global}, {"model_dir", config_.model_dir}});
    return 130;
  }
  const Evaluation ev = est.evaluate(test_input);
  compile_s += ev.compile_seconds;
  eval_s += ev.seconds - ev.compile_seconds;
  const double rate = train_s > 0 ? static_cast<double>(run_steps) / train_s : 0;
  const double throughput = rate * static_cast<double>(batch_size_);
  std::printf("done: %lld steps%s in %.1fs (compile %.1fs, train %.1fs, eval %.1fs); %.1f steps/s, %.0f examples/s; "
              "final loss %.4f, test loss %.4f, test accuracy %.4f\n",
              static_cast<long long>(global),
              resumed ? (" (" + std::to_string(run_steps) + " this run, resumed at " + std::to_string(start_step) + ")").c_str() : "",
              compile_s + train_s + eval_s, compile_s, train_s, eval_s, rate, throughput, final_loss, ev.at("loss"),
              ev.at("accuracy"));
  if (accel) std::printf("%s", accel_totals.summary().c_str());
  const CompileSummary& cs = est.compile_summary();
  if (backend_ == "cpu")
    std::printf("compile: cache %s (%d of %d graphs loaded from the cache); %.3fs = passes %.3fs, codegen %.3fs, "
                "c++ %.3fs, load %.3fs\n",
                cs.cache().c_str(), cs.cache_hits, cs.graphs,
                cs.passes_seconds + cs.codegen_seconds + cs.compile_seconds + cs.load_seconds, cs.passes_seconds,
                cs.codegen_seconds, cs.compile_seconds, cs.load_seconds);
  nlohmann::json final_record = {{"event", "final"},
                 {"steps", global},
                 {"steps_this_run", run_steps},
                 {"resumed_from_step", resumed ? start_step : 0},
                 {"train_seconds", train_s},
                 {"compile_seconds", compile_s},
                 {"eval_seconds", eval_s},
                 {"steps_per_second", rate},
                 {"examples_per_second", throughput},
                 {"final_loss", final_loss},
                 {"test_loss", ev.at("loss")},
                 {"test_accuracy", ev.at("accuracy")},
                 {"test_examples", ev.examples},
                 {"model", model_},
                 {"backend", backend_},
                 {"compile_cache", cs.cache()},
                 {"compile",
                  {{"cache", cs.cache()},
                   {"graphs", cs.graphs},
                   {"cache_hits", cs.cache_hits},
                   {"cache_misses", cs.cache_misses},
                   {"seconds", cs.passes_seconds + cs.codegen_seconds + cs.compile_seconds + cs.load_seconds},
                   {"passes_seconds", cs.passes_seconds},
                   {"codegen_seconds", cs.codegen_seconds},
                   {"cxx_seconds", cs.compile_seconds},
                   {"load_seconds", cs.load_seconds}}}};
  if (accel) final_record["accelerate"] = accel_totals.to_json();
  metrics.write(final_record);
  return 0;
}

}  // namespace kiln::cli
