// The recipes by name.
#include "kiln/models/recipe.h"

#include "kiln/data/dataset.h"
#include "kiln/base/error.h"

namespace kiln {

std::unique_ptr<Recipe> make_classifier_recipe(const std::string& model);  // classifier_recipe.cpp
std::unique_ptr<Recipe> make_gpt_recipe();                                 // gpt_recipe.cpp

std::vector<std::string> recipe_names() {
  std::vector<std::string> names = model_names();
  names.push_back(kGptModelName);
  return names;
}

std::unique_ptr<Recipe> make_recipe(const std::string& model) {
  if (model == kGptModelName) return make_gpt_recipe();
  for (const std::string& name : model_names())
    if (model == name) return make_classifier_recipe(model);
  std::string valid;
  for (const std::string& name : recipe_names()) valid += (valid.empty() ? "" : ", ") + name;
  KILN_THROW(ConfigError) << "[model] unknown model '" << model << "'; valid: " << valid;
}

TrainSettings default_train_settings() {
  TrainSettings s;
  s.data = data::kDefaultFashionMnistDir;
  s.steps = 1200;
  s.batch_size = 256;
  return s;
}

}  // namespace kiln
