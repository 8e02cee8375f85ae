// A model family as `kiln train` trains it: its recipe. The command owns the options and
// the run (the Estimator, hooks, records, reports); a recipe owns everything that differs
// between the families — the defaults of the options it changes, the options it refuses,
// its data and the split it evaluates on, its model_fn, what its checkpoints record beside
// the weights, and how the banner names it. Two families today: the classifiers (mlp, cnn)
// on Fashion-MNIST, and the character gpt on a text.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/train/estimator.h"
#include "kiln/models/models.h"
#include "kiln/train/optimizer.h"

namespace kiln {

// What `kiln train` was told, after the recipe's defaults for the options not given.
struct TrainSettings {
  std::string model = "mlp";
  std::string data;  // classifiers: a directory of IDX files; gpt: a text file or a folder of them
  int64_t steps = 0;
  int64_t batch_size = 0;  // the global batch (split over the ranks of a data-parallel job)
  int64_t seed = 0;
  int64_t train_limit = 0;  // 0: every training example
  int64_t test_limit = 0;   // 0: every evaluation example (gpt: validation window)
  int64_t eval_batch_size = 1000;
  GptShape gpt;  // gpt only; its vocabulary comes from the data
  int world_size = 1;
};

// The data a run trains and evaluates on.
struct TrainData {
  InputFn train_input, eval_input;
  std::string summary;  // the "data: ..." line
};

// Whether the user gave an option ("--layers").
using OptionGiven = std::function<bool(std::string_view option)>;

class Recipe {
 public:
  virtual ~Recipe() = default;
  // The options this family gives other defaults than the classifiers' (kept when given).
  virtual void apply_defaults(TrainSettings& s, const OptionGiven& given) const = 0;
  // ConfigError for an option the family does not take, or a model the machine cannot
  // hold; before any work, also in a dry run.
  virtual void check(const TrainSettings& s, const OptionGiven& given) const = 0;
  // Before any work, also in a dry run: the data is where it should be (DataError). A dry
  // run reads nothing else, so `dry_run` asks for what load() would find wrong in the text.
  virtual void check_data(const TrainSettings& s, bool dry_run) const = 0;
  // Reads the data (DataError, ConfigError for a batch it cannot fill). Called once.
  virtual TrainData load(const TrainSettings& s) = 0;
  // After load().
  virtual ModelFn model_fn(const TrainSettings& s) const = 0;
  // The optimizer the family trains with unless told otherwise.
  virtual OptimizerSettings optimizer() const = 0;
  // After load(): what checkpoints record beside the weights for this family (merged into
  // the command's own run settings), and the fields the final record adds.
  virtual nlohmann::json run_settings(const TrainSettings& s) const = 0;
  virtual nlohmann::json final_record(const TrainSettings& s) const = 0;
  // The banner's name of the model ("mlp", "gpt (4 layers, 4 heads, width 128, context 64)").
  virtual std::string describe(const TrainSettings& s) const = 0;
  // What evaluations run on: "test", or gpt's "validation".
  virtual std::string eval_split() const = 0;
};

// The recipe of a built-in model (recipe_names()); ConfigError listing them otherwise.
std::unique_ptr<Recipe> make_recipe(const std::string& model);
// "mlp", "cnn", "gpt".
std::vector<std::string> recipe_names();
// The classifiers' defaults (the command's own): Fashion-MNIST, 1200 steps, batch 256.
TrainSettings default_train_settings();

}  // namespace kiln
