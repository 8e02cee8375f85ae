// `kiln train`: train a built-in model on Fashion-MNIST and evaluate it on the test set.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

#include "kiln/config.h"
#include "kiln/trainer.h"

namespace kiln::cli {

class TrainCommand {
 public:
  explicit TrainCommand(CLI::App& parent);
  bool selected() const { return cmd_->parsed(); }
  // Returns the process exit status.
  int run();

 private:
  void refuse_unbuilt_features() const;

  CLI::App* cmd_;
  std::string model_ = "mlp";
  std::string data_dir_ = data::kDefaultFashionMnistDir;
  std::string backend_ = "interp";
  std::string metrics_out_;
  int64_t train_limit_ = 0;
  bool dry_run_ = false;
  TrainOptions options_;
  RunConfig config_;
};

}  // namespace kiln::cli
