// A classifier training loop on the interpreter: builds the training graph (model,
// mean cross-entropy, optimiser updates) and an evaluation graph that shares its
// variables, runs the steps with logging, and evaluates on a test set.
// (The Estimator API of SPEC §4 is built on top of this in src/train/.)
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "kiln/data.h"
#include "kiln/models.h"
#include "kiln/runtime.h"

namespace kiln {

struct TrainOptions {
  int64_t steps = 1200;
  int64_t batch_size = 256;
  std::string optimizer = "momentum";
  double learning_rate = 0.05;
  int64_t seed = 0;
  int64_t log_every = 100;       // steps between progress records; 0 = none
  int64_t eval_batch_size = 1000;
};

struct Progress {
  int64_t step;            // global step reached
  double loss;             // mean training loss since the previous record
  double steps_per_second; // since the previous record
  double elapsed_seconds;
};

struct TrainResult {
  int64_t steps = 0;
  double train_seconds = 0;
  double steps_per_second = 0;
  double final_loss = 0;  // training loss of the last step
  std::vector<double> losses;  // every step's training loss
};

struct EvalResult {
  double loss = 0;
  double accuracy = 0;
  int64_t examples = 0;
};

class ClassifierTrainer {
 public:
  ClassifierTrainer(ModelFn model, int64_t feature_dim, int64_t classes, TrainOptions options);

  TrainResult train(const data::Dataset& train_set, const std::function<void(const Progress&)>& on_progress = {});
  EvalResult evaluate(const data::Dataset& test_set);

  Variables& variables() { return vars_; }
  const Graph& train_graph() const { return train_graph_; }

 private:
  Graph build_eval_graph(int64_t batch) const;

  ModelFn model_;
  int64_t feature_dim_, classes_;
  TrainOptions options_;
  Graph train_graph_;
  std::unique_ptr<Executable> train_exec_;
  Variables vars_;
};

}  // namespace kiln
