// The model families' recipes (kiln/models/recipe.h): what each defaults, refuses, loads and records.
#include "kiln/models/recipe.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "kiln/data/dataset.h"
#include "kiln/base/error.h"
#include "kiln/data/text_data.h"
#include "support/temp_files.h"

namespace kiln {
namespace {

OptionGiven given_of(std::set<std::string> options) {
  return [options](std::string_view o) { return options.count(std::string(o)) > 0; };
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Recipe, NamesEveryBuiltInModelAndRefusesOthersListingThem) {
  EXPECT_EQ(recipe_names(), (std::vector<std::string>{"mlp", "cnn", "gpt"}));
  for (const std::string& name : recipe_names()) EXPECT_NE(make_recipe(name), nullptr) << name;
  const std::string e = error_of([] { make_recipe("resnet"); });
  EXPECT_NE(e.find("[model] unknown model 'resnet'; valid: mlp, cnn, gpt"), std::string::npos) << e;
}

TEST(Recipe, GptDefaultsOnlyWhatWasNotGiven) {
  const auto gpt = make_recipe("gpt");
  TrainSettings s = default_train_settings();
  s.model = "gpt";
  gpt->apply_defaults(s, given_of({}));
  EXPECT_EQ(s.data, data::kDefaultFortunesDir);
  EXPECT_EQ(s.batch_size, 32);
  EXPECT_EQ(s.steps, 2000);
  TrainSettings kept = default_train_settings();
  kept.steps = 7;
  gpt->apply_defaults(kept, given_of({"--steps", "--batch-size", "--data"}));
  EXPECT_EQ(kept.steps, 7);
  EXPECT_EQ(kept.batch_size, default_train_settings().batch_size);
  EXPECT_EQ(kept.data, default_train_settings().data);
  TrainSettings mlp = default_train_settings();
  make_recipe("mlp")->apply_defaults(mlp, given_of({}));
  EXPECT_EQ(mlp.data, data::kDefaultFashionMnistDir);
  EXPECT_EQ(mlp.steps, 1200);
  EXPECT_EQ(mlp.batch_size, 256);
}

TEST(Recipe, EachFamilyRefusesTheOtherFamilysOptions) {
  TrainSettings s = default_train_settings();
  const std::string layers = error_of([&] { make_recipe("cnn")->check(s, given_of({"--layers"})); });
  EXPECT_NE(layers.find("[layers] is an option of --model gpt, not cnn"), std::string::npos) << layers;
  s.model = "gpt";
  s.batch_size = 32;
  const std::string limit = error_of([&] { make_recipe("gpt")->check(s, given_of({"--train-limit"})); });
  EXPECT_NE(limit.find("[train_limit]"), std::string::npos) << limit;
  s.gpt.heads = 3;  // does not divide the width 128
  const std::string heads = error_of([&] { make_recipe("gpt")->check(s, given_of({})); });
  EXPECT_NE(heads.find("[heads]"), std::string::npos) << heads;
}

TEST(Recipe, ClassifierDataMustBeADirectory) {
  const auto dir = testkit::fresh_dir("recipe-data");
  TrainSettings s = default_train_settings();
  s.data = (dir / "missing").string();
  const std::string e = error_of([&] { make_recipe("mlp")->check_data(s, false); });
  EXPECT_NE(e.find("[data] Fashion-MNIST directory '" + s.data + "' does not exist"), std::string::npos) << e;
}

TEST(Recipe, GptRecordsTheVocabularyOfTheTextItLoaded) {
  const auto dir = testkit::fresh_dir("recipe-gpt");
  std::filesystem::create_directories(dir);
  std::string text;
  for (int i = 0; i < 200; ++i) text += "abcab cab\n";
  std::ofstream(dir / "t.txt") << text;
  TrainSettings s = default_train_settings();
  s.model = "gpt";
  s.data = (dir / "t.txt").string();
  s.batch_size = 2;
  s.gpt.context = 8;
  const auto gpt = make_recipe("gpt");
  gpt->check_data(s, true);  // a dry run reads it all
  const TrainData d = gpt->load(s);
  EXPECT_NE(d.summary.find("vocabulary 5 bytes"), std::string::npos) << d.summary;
  EXPECT_EQ(gpt->run_settings(s).at("vocabulary"), data::vocabulary_to_hex("\n abc"));
  EXPECT_EQ(gpt->final_record(s).at("gpt").at("vocabulary"), 5);
  EXPECT_EQ(gpt->eval_split(), "validation");
  EXPECT_EQ(gpt->describe(s), "gpt (4 layers, 4 heads, width 128, context 8)");
  s.gpt.context = 5000;  // longer than the text
  EXPECT_THROW(gpt->check_data(s, true), Error);
  EXPECT_NO_THROW(gpt->check_data(s, false));  // a run finds out in load()
  std::filesystem::remove_all(dir);
}

TEST(Recipe, ClassifiersAddNothingToTheRecordsAndEvaluateOnTheTestSet) {
  const auto mlp = make_recipe("mlp");
  const TrainSettings s = default_train_settings();
  EXPECT_TRUE(mlp->run_settings(s).empty());
  EXPECT_TRUE(mlp->final_record(s).empty());
  EXPECT_EQ(mlp->eval_split(), "test");
  EXPECT_EQ(mlp->describe(s), "mlp");
  EXPECT_EQ(mlp->optimizer().name, default_optimizer("mlp").name);
  EXPECT_EQ(make_recipe("gpt")->optimizer().name, gpt_optimizer().name);
}

}  // namespace
}  // namespace kiln
