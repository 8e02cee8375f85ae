// `kiln sample --model-dir DIR [--prompt TEXT] [--length N] [--seed S] [--temperature T]`:
// generates text with the gpt whose latest checkpoint is in DIR. `kiln train --model gpt`
// records the model's sizes and the text's vocabulary in every checkpoint, so sampling
// needs no data path.
#pragma once
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "kiln/models/models.h"

namespace kiln::cli {

class SampleCommand {
 public:
  explicit SampleCommand(CLI::App& parent);
  bool selected() const { return cmd_->parsed(); }
  const CLI::App* command() const { return cmd_; }
  // Prints the prompt and the generated text; returns the exit status.
  int run();

 private:
  CLI::App* cmd_;
  std::string model_dir_;
  std::string backend_;  // --backend, parsed where it is used
  SampleOptions options_;
};

}  // namespace kiln::cli
