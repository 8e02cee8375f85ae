// `kiln train`: train a built-in model with the Estimator and evaluate it. What differs
// between the model families (the classifiers on Fashion-MNIST, gpt on a text) is their
// recipe (kiln/models/recipe.h); this command owns the options and the run: it resolves the
// settings, loads the data, builds one Estimator, trains with its hooks, evaluates, and
// writes the records and the report.
#pragma once
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kiln/backend/backend.h"
#include "kiln/train/config.h"
#include "kiln/train/estimator.h"
#include "kiln/train/optimizer.h"
#include "kiln/models/recipe.h"
#include "optimizer_options.h"

namespace kiln::cli {

class MetricsWriter;
class ProgressHook;
class EvalHook;

class TrainCommand {
 public:
  explicit TrainCommand(CLI::App& parent);
  ~TrainCommand();
  bool selected() const { return cmd_->parsed(); }
  const CLI::App* command() const { return cmd_; }
  // Returns the process exit status (130 when stopped by Ctrl-C).
  int run();

 private:
  // What the run's train() call and its evaluations cost.
  struct Totals {
    TrainStats st;
    double compile_s = 0, train_s = 0, eval_s = 0;
  };

  void add_options();
  bool given(std::string_view option) const { return cmd_->count(std::string(option)) > 0; }
  // The recipe's defaults and checks, the optimizer, and the checks of the options against
  // each other and the job; before any work, also in a dry run.
  ParsedRunConfig resolve_settings();
  void check_options(const ParsedRunConfig& parsed) const;
  std::unique_ptr<Estimator> make_estimator(std::shared_ptr<ModelDirLock> model_dir_lock);
  nlohmann::json run_settings() const;
  std::string banner() const;
  void on_precision_switch(const PrecisionSwitchEvent& e);
  HookList hooks(Estimator& est, const TrainData& data);
  void count_evaluation(const Evaluation& ev);
  void train(Estimator& est, const TrainData& data);
  // train/report.cpp: the end of the run.
  int report_interrupted();
  void report_final(Estimator& est, const TrainData& data);
  void print_final(const Evaluation& ev, const CompileSummary& cs) const;
  nlohmann::json final_record(const Evaluation& ev, const CompileSummary& cs) const;
  // Data-parallel jobs (kiln::World): ranks > 0 stay silent; the final record's world part.
  void mute_output();
  void add_world_record(nlohmann::json& record, const CompileSummary& cs) const;
  std::string run_label(const ParsedRunConfig& parsed) const;  // "mlp fast1|step|0.9"
  nlohmann::json optimizer_record() const;                     // the final record's "params"
  template <class... Args>
  void say(const char* fmt, Args... args) const {
    if (quiet_) return;
    std::printf(fmt, args...);
    std::fflush(stdout);
  }

  CLI::App* cmd_;
  TrainSettings settings_ = default_train_settings();
  std::string backend_option_;  // --backend
  Backend backend_ = kDefaultBackend;  // resolved at the start of run()
  std::string metrics_out_;
  std::string report_out_;  // --report
  OptimizerOptions optimizer_options_;
  OptimizerSettings optimizer_;  // resolved at the start of run(): the model's recipe and the options
  double final_loss_ = 0;        // 0: not given
  int64_t log_every_ = 100;
  int64_t eval_every_ = 0;
  bool dry_run_ = false;
  bool quiet_ = false;
  RunConfig config_;

  // The run in progress.
  std::unique_ptr<Recipe> recipe_;
  std::shared_ptr<MetricsWriter> metrics_;  // also the Estimator's second record sink
  std::shared_ptr<ProgressHook> progress_;
  std::shared_ptr<EvalHook> evals_;
  Totals totals_;
};

}  // namespace kiln::cli
