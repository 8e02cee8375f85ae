// The classifiers' recipe (mlp, cnn): Fashion-MNIST's training set, evaluated on its test set.
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "kiln/data/dataset.h"
#include "kiln/base/error.h"
#include "kiln/models/recipe.h"

namespace kiln {
namespace {
namespace fs = std::filesystem;

// DataError when the training or test examples do not have the features `model` takes.
void check_image_size(const std::string& model, const std::string& data_dir, const data::Dataset& train,
                      const data::Dataset& test) {
  const int64_t want = model_input_size(model);
  const auto side = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(want))));
  for (const auto& [which, ds] : {std::pair{"training", &train}, std::pair{"test", &test}}) {
    if (ds->feature_dim() == want) continue;
    KILN_THROW(DataError) << "[data] the " << which << " images in '" << data_dir << "' have " << ds->feature_dim()
                          << " pixels each, but model " << model << " takes " << side << "x" << side << " = " << want
                          << " (Fashion-MNIST's size); nothing was trained";
  }
}

class ClassifierRecipe final : public Recipe {
 public:
  explicit ClassifierRecipe(std::string model) : model_(std::move(model)) {}

  void apply_defaults(TrainSettings&, const OptionGiven&) const override {}  // the command's own

  void check(const TrainSettings&, const OptionGiven& given) const override {
    for (const char* o : {"--layers", "--heads", "--width", "--context"})
      if (given(o)) KILN_THROW(ConfigError) << "[" << (o + 2) << "] is an option of --model gpt, not " << model_;
  }

  // DataError when the data directory is missing, not a directory or cannot be searched.
  void check_data(const TrainSettings& s, bool) const override {
    std::error_code ec;
    const fs::file_status data = fs::status(s.data, ec);
    if (!fs::exists(data))
      KILN_THROW(DataError) << "[data] Fashion-MNIST directory '" << s.data << "' does not exist"
                            << (ec && ec != std::errc::no_such_file_or_directory ? " or cannot be examined (" + ec.message() + ")" : "")
                            << " (install the 'dataset-fashion-mnist' package with scripts/install-deps)";
    if (!fs::is_directory(data)) KILN_THROW(DataError) << "[data] '" << s.data << "' is not a directory";
    if (::access(s.data.c_str(), R_OK | X_OK) != 0) {
      const int err = errno;
      KILN_THROW(DataError) << "[data] directory '" << s.data << "' cannot be read: " << std::strerror(err);
    }
  }

  TrainData load(const TrainSettings& s) override {
    data::FashionMnist both = data::load_fashion_mnist_splits(s.data);
    auto train = std::make_shared<data::Dataset>(std::move(both.train));
    auto test_all = std::move(both.test);
    if (s.test_limit > 0 && s.test_limit < test_all.size()) test_all = data::take(test_all, s.test_limit);
    if (s.train_limit > 0 && s.train_limit < train->size()) *train = data::take(*train, s.train_limit);
    check_image_size(model_, s.data, *train, test_all);
    if (s.batch_size > train->size())
      KILN_THROW(ConfigError) << "[batch_size] '" << s.batch_size << "' exceeds the " << train->size()
                              << " training examples";
    auto test = std::make_shared<const data::Dataset>(std::move(test_all));
    const auto seed = static_cast<uint64_t>(s.seed);
    const int64_t batch = s.batch_size, eval_batch = s.eval_batch_size;
    TrainData d;
    d.train_input = [train = std::shared_ptr<const data::Dataset>(train), seed, batch] {
      return data::prefetch(data::batches(train, data::BatcherOptions::training(batch, seed)));
    };
    d.eval_input = [test, eval_batch] {
      return data::prefetch(data::batches(test, data::BatcherOptions::evaluation(eval_batch)));
    };
    char line[512];
    std::snprintf(line, sizeof line, "data: %lld training and %lld test examples from %s\n",
                  static_cast<long long>(train->size()), static_cast<long long>(test->size()), s.data.c_str());
    d.summary = line;
    return d;
  }

  ModelFn model_fn(const TrainSettings& s) const override { return classifier_model_fn(make_model(model_, s.seed)); }
  OptimizerSettings optimizer() const override { return default_optimizer(model_); }
  nlohmann::json run_settings(const TrainSettings&) const override { return nlohmann::json::object(); }
  nlohmann::json final_record(const TrainSettings&) const override { return nlohmann::json::object(); }
  std::string describe(const TrainSettings&) const override { return model_; }
  std::string eval_split() const override { return "test"; }

 private:
  std::string model_;
};

}  // namespace

std::unique_ptr<Recipe> make_classifier_recipe(const std::string& model) {
  make_model(model, 0);  // ConfigError for an unknown name
  return std::make_unique<ClassifierRecipe>(model);
}

}  // namespace kiln
