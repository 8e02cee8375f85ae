// The run-configuration options of the `kiln` command (train and friends), one per
// RunConfig / ExperimentalConfig field, named after the seed's options:
//   --precision-mode, --precision-mode-v2, --accelerate-train-mode,
//   --graph-compiler-cache-dir, --cache-size-cap (2G, 512M, bytes), --cache-strict,
//   --accelerate-loss-window, --accelerate-max-low-share, --iterations-per-loop,
//   --model-dir, --save-checkpoints-steps, --keep-checkpoint-max,
//   --log-step-count-steps, --save-summary-steps, --threads.
// The random seed is not here: the command that trains owns --seed.
#pragma once
#include <CLI/CLI.hpp>

#include "kiln/train/config.h"

namespace kiln {

// Registers the options on `app` (group "Run configuration"), writing into `cfg`, which
// must outlive app.parse(). Values are stored as given, without range checks: the caller
// runs cfg.validate() after parsing and reports its ConfigError (exit 2). Only text that
// is not a value of the option's kind (e.g. "--threads x", "--cache-size-cap 1.5G") is
// rejected during parsing, as a CLI::ParseError.
void add_run_config_options(CLI::App& app, RunConfig& cfg);

}  // namespace kiln
