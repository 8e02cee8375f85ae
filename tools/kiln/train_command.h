// `kiln train`: train a built-in model on Fashion-MNIST with the Estimator and evaluate it
// on the test set.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

#include "kiln/config.h"
#include "kiln/data.h"

namespace kiln::cli {

class TrainCommand {
 public:
  explicit TrainCommand(CLI::App& parent);
  bool selected() const { return cmd_->parsed(); }
  // Returns the process exit status (130 when stopped by Ctrl-C).
  int run();

 private:
  CLI::App* cmd_;
  std::string model_ = "mlp";
  std::string data_dir_ = data::kDefaultFashionMnistDir;
  std::string backend_;
  std::string metrics_out_;
  std::string optimizer_ = "momentum";
  int64_t steps_ = 1200;
  int64_t batch_size_ = 256;
  double learning_rate_ = 0.05;
  double final_loss_ = 0;  // 0: not given
  int64_t seed_ = 0;
  int64_t log_every_ = 100;
  int64_t eval_every_ = 0;
  int64_t eval_batch_size_ = 1000;
  int64_t train_limit_ = 0;
  int64_t test_limit_ = 0;
  bool dry_run_ = false;
  bool quiet_ = false;
  RunConfig config_;
};

}  // namespace kiln::cli
