// `kiln train`: train a built-in model with the Estimator and evaluate it: the classifiers
// (mlp, cnn) on Fashion-MNIST and its test set, gpt on a text (the fortunes package by
// default) and its last 10% (the validation split).
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kiln/config.h"
#include "kiln/data.h"
#include "kiln/estimator.h"
#include "kiln/models.h"
#include "kiln/optimizer.h"
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
  struct Data;  // the training and test sets and their input functions
  // What the run's train() call and its evaluations cost.
  struct Totals {
    TrainStats st;
    double compile_s = 0, train_s = 0, eval_s = 0;
  };

  std::unique_ptr<Estimator> make_estimator(std::shared_ptr<ModelDirLock> model_dir_lock = nullptr);
  void check_final_loss(const std::optional<AccelerateTrainMode>& accel) const;
  std::string banner() const;
  Data load_data();
  Data load_text_data();  // gpt
  bool is_gpt() const { return model_ == kGptModelName; }
  ModelFn model_fn();
  nlohmann::json run_settings() const;
  void on_precision_switch(const PrecisionSwitchEvent& e);
  HookList hooks(Estimator& est, const Data& data);
  void count_evaluation(const Evaluation& ev);
  void train(Estimator& est, const Data& data);
  int report_interrupted();
  void report_final(Estimator& est, const Data& data);
  // Data-parallel jobs (kiln::World): ranks > 0 stay silent; the final record's world part.
  void mute_output();
  void add_world_record(nlohmann::json& record, const CompileSummary& cs) const;
  std::string run_label(const ParsedRunConfig& parsed) const;  // "mlp fast1|step|0.9"
  nlohmann::json optimizer_record() const;                     // the final record's "params"
  template <class... Args>
  void say(const char* fmt, Args... args) const;

  CLI::App* cmd_;
  std::string model_ = "mlp";
  std::string data_dir_ = data::kDefaultFashionMnistDir;
  std::string backend_;
  std::string metrics_out_;
  std::string report_out_;  // --report
  OptimizerOptions optimizer_options_;
  OptimizerSettings optimizer_;  // resolved at the start of run(): the model's recipe and the options
  int64_t steps_ = 1200;
  int64_t batch_size_ = 256;
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
  GptShape gpt_;                 // --layers --heads --width --context; vocabulary from the data
  std::string text_vocabulary_;  // gpt: the text's distinct bytes (recorded in checkpoints)
  std::string eval_split_ = "test";  // what evaluations run on: "test", or gpt's "validation"

  // The run in progress.
  std::unique_ptr<MetricsWriter> metrics_;
  std::shared_ptr<ProgressHook> progress_;
  std::shared_ptr<EvalHook> evals_;
  Totals totals_;
};

}  // namespace kiln::cli
