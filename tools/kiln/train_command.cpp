#include "kiln/train_command.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <omp.h>

#include <nlohmann/json.hpp>

#include "kiln/error.h"
#include "kiln/precision.h"
#include "kiln/run_config_options.h"

namespace kiln::cli {
namespace {

// Writes JSON Lines records; a file that cannot be opened is reported before training.
class MetricsWriter {
 public:
  explicit MetricsWriter(const std::string& path) {
    if (path.empty()) return;
    out_.open(path, std::ios::trunc);
    if (!out_) KILN_THROW(ConfigError) << "[metrics_out] cannot open '" << path << "' for writing";
  }
  void write(const nlohmann::json& record) {
    if (!out_.is_open()) return;
    out_ << record.dump() << "\n";
    out_.flush();
  }

 private:
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

}  // namespace

TrainCommand::TrainCommand(CLI::App& parent) {
  cmd_ = parent.add_subcommand("train", "Train a model on Fashion-MNIST and evaluate it on the test set");
  cmd_->add_option("--model", model_, "Model to train")->check(CLI::IsMember({"mlp"}))->capture_default_str();
  cmd_->add_option("--data", data_dir_, "Directory holding the Fashion-MNIST IDX files")->capture_default_str();
  cmd_->add_option("--steps", options_.steps, "Training steps")->check(whole_number(0))->capture_default_str();
  cmd_->add_option("--batch-size", options_.batch_size, "Examples per step")
      ->check(whole_number(1))
      ->capture_default_str();
  cmd_->add_option("--learning-rate", options_.learning_rate, "Learning rate")
      ->check(positive_real())
      ->capture_default_str();
  cmd_->add_option("--optimizer", options_.optimizer, "Optimizer")
      ->check(CLI::IsMember({"sgd", "momentum", "adam"}))
      ->capture_default_str();
  cmd_->add_option("--seed", options_.seed, "Seed of initialisation and shuffling")->check(whole_number(0))->capture_default_str();
  cmd_->add_option("--backend", backend_, "Execution backend")->check(CLI::IsMember({"interp"}))->capture_default_str();
  cmd_->add_option("--log-every", options_.log_every, "Steps between progress lines (0: none)")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd_->add_option("--train-limit", train_limit_, "Use only the first N training examples (0: all)")
      ->check(whole_number(0));
  cmd_->add_option("--metrics-out", metrics_out_, "Write JSON Lines metrics to this file");
  cmd_->add_flag("--dry-run", dry_run_,
                 "Validate the whole configuration, print the effective settings and exit (0 if valid, 2 if not)");
  add_run_config_options(*cmd_, config_);
}

// Settings that are validated but whose feature this build does not have yet are refused
// rather than silently ignored.
void TrainCommand::refuse_unbuilt_features() const {
  const PrecisionPolicy policy = effective_policy(config_);
  if (policy != PrecisionPolicy::original && policy != PrecisionPolicy::force_fp32)
    KILN_THROW(ConfigError) << "[precision_mode] policy '" << precision_policy_name(policy)
                            << "' is not available yet: this build trains in the original precision only";
  if (!config_.experimental_config.accelerate_train_mode.empty())
    KILN_THROW(ConfigError) << "[accelerate_train_mode] '" << config_.experimental_config.accelerate_train_mode
                            << "' is valid, but this build cannot train in low precision yet; use --dry-run to check"
                               " a configuration";
  if (!config_.model_dir.empty())
    KILN_THROW(ConfigError) << "[model_dir] '" << config_.model_dir
                            << "': checkpoints are not available yet in this build";
}

int TrainCommand::run() {
  config_.random_seed = static_cast<uint64_t>(options_.seed);
  config_.validate();
  if (dry_run_) {
    std::printf("kiln train: model %s, %lld steps, batch %lld, %s lr %g, seed %lld, backend %s\n", model_.c_str(),
                static_cast<long long>(options_.steps), static_cast<long long>(options_.batch_size),
                options_.optimizer.c_str(), options_.learning_rate, static_cast<long long>(options_.seed),
                backend_.c_str());
    std::printf("%s", describe(config_, options_.steps).c_str());
    std::printf("configuration is valid (dry run: nothing trained)\n");
    return 0;
  }
  refuse_unbuilt_features();
  if (config_.num_threads > 0) omp_set_num_threads(config_.num_threads);
  if (!config_.experimental_config.graph_compiler_cache_dir.empty())
    std::printf("note: backend %s compiles nothing, so graph_compiler_cache_dir is not used\n", backend_.c_str());
  MetricsWriter metrics(metrics_out_);
  data::Dataset train_set = data::load_fashion_mnist(data_dir_, data::Split::train);
  const data::Dataset test_set = data::load_fashion_mnist(data_dir_, data::Split::test);
  if (train_limit_ > 0 && train_limit_ < train_set.size()) train_set = data::take(train_set, train_limit_);
  if (options_.batch_size > train_set.size())
    KILN_THROW(ConfigError) << "[batch_size] '" << options_.batch_size << "' exceeds the " << train_set.size()
                            << " training examples";

  std::printf("kiln train: model %s, %lld steps, batch %lld, %s lr %g, seed %lld, backend %s\n", model_.c_str(),
              static_cast<long long>(options_.steps), static_cast<long long>(options_.batch_size),
              options_.optimizer.c_str(), options_.learning_rate, static_cast<long long>(options_.seed),
              backend_.c_str());
  std::printf("data: %lld training and %lld test examples from %s\n", static_cast<long long>(train_set.size()),
              static_cast<long long>(test_set.size()), data_dir_.c_str());
  std::fflush(stdout);

  ClassifierTrainer trainer(make_model(model_, options_.seed), train_set.feature_dim(), 10, options_);
  const TrainResult tr = trainer.train(train_set, [&](const Progress& p) {
    std::printf("step %6lld  loss %.4f  %.1f steps/s  %.1fs\n", static_cast<long long>(p.step), p.loss,
                p.steps_per_second, p.elapsed_seconds);
    std::fflush(stdout);
    metrics.write({{"event", "progress"},
                   {"step", p.step},
                   {"loss", p.loss},
                   {"steps_per_second", p.steps_per_second},
                   {"elapsed_seconds", p.elapsed_seconds}});
  });
  const EvalResult ev = trainer.evaluate(test_set);
  std::printf("done: %lld steps in %.1fs (%.1f steps/s), final loss %.4f, test loss %.4f, test accuracy %.4f\n",
              static_cast<long long>(tr.steps), tr.train_seconds, tr.steps_per_second, tr.final_loss, ev.loss,
              ev.accuracy);
  metrics.write({{"event", "final"},
                 {"steps", tr.steps},
                 {"train_seconds", tr.train_seconds},
                 {"steps_per_second", tr.steps_per_second},
                 {"final_loss", tr.final_loss},
                 {"test_loss", ev.loss},
                 {"test_accuracy", ev.accuracy},
                 {"test_examples", ev.examples},
                 {"model", model_},
                 {"backend", backend_}});
  return 0;
}

}  // namespace kiln::cli
