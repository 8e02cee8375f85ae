// The character gpt's recipe: a text (the fortunes package by default) split 90/10, trained
// on random windows of the first part and evaluated on consecutive windows of the last
// (the validation split). The text's distinct bytes are its vocabulary, recorded in the
// checkpoints so that `kiln sample` can spell the tokens.
#include <algorithm>
#include <cstdio>

#include "backend/memory_check.h"
#include "kiln/base/error.h"
#include "kiln/models/recipe.h"
#include "kiln/data/text_data.h"

namespace kiln {
namespace {

class GptRecipe final : public Recipe {
 public:
  void apply_defaults(TrainSettings& s, const OptionGiven& given) const override {
    if (!given("--data")) s.data = data::kDefaultFortunesDir;
    if (!given("--batch-size")) s.batch_size = 32;
    if (!given("--steps")) s.steps = 2000;
  }

  void check(const TrainSettings& s, const OptionGiven& given) const override {
    GptShape shape = s.gpt;
    shape.vocabulary = 1;  // known once the text is read
    validate(shape);
    // Before any work (also in a dry run): a model the machine cannot hold is refused.
    const double bytes = gpt_training_bytes(shape, s.batch_size / std::max(s.world_size, 1));
    check_fits_in_memory(bytes > 9e18 ? int64_t{9000000000000000000} : static_cast<int64_t>(bytes),
                         "training gpt (--layers, --width, --context, --batch-size)");
    if (given("--train-limit"))
      KILN_THROW(ConfigError) << "[train_limit] counts Fashion-MNIST examples; for gpt give --data a shorter text";
  }

  // A run reads the text once, in load(); a dry run reads it here: readable UTF-8, long
  // enough for a window of each split.
  void check_data(const TrainSettings& s, bool dry_run) const override {
    std::string vocabulary;
    if (dry_run) read(s, vocabulary);
  }

  TrainData load(const TrainSettings& s) override { return read(s, vocabulary_); }

  ModelFn model_fn(const TrainSettings& s) const override { return gpt_model_fn(shape(s), s.seed); }
  OptimizerSettings optimizer() const override { return gpt_optimizer(); }

  // What `kiln sample` needs to rebuild the model and spell its tokens.
  nlohmann::json run_settings(const TrainSettings& s) const override {
    return {{"--model", s.model},       {"--layers", s.gpt.layers},   {"--heads", s.gpt.heads},
            {"--width", s.gpt.width},   {"--context", s.gpt.context}, {"vocabulary", data::vocabulary_to_hex(vocabulary_)}};
  }

  nlohmann::json final_record(const TrainSettings& s) const override {
    return {{"gpt",
             {{"layers", s.gpt.layers},
              {"heads", s.gpt.heads},
              {"width", s.gpt.width},
              {"context", s.gpt.context},
              {"vocabulary", vocabulary_.size()},
              {"eval_split", eval_split()}}}};
  }

  std::string describe(const TrainSettings& s) const override {
    return s.model + " (" + std::to_string(s.gpt.layers) + " layers, " + std::to_string(s.gpt.heads) + " heads, width " +
           std::to_string(s.gpt.width) + ", context " + std::to_string(s.gpt.context) + ")";
  }
  std::string eval_split() const override { return "validation"; }

 private:
  TrainData read(const TrainSettings& s, std::string& vocabulary) const {
    const data::TextCorpus corpus = data::load_text_corpus(s.data);
    vocabulary = corpus.vocabulary;
    data::TextSplit split = data::split_tokens(corpus.tokens, 0.9);
    auto train = std::make_shared<const std::vector<int32_t>>(std::move(split.train));
    auto validation = std::make_shared<const std::vector<int32_t>>(std::move(split.validation));
    const auto seed = static_cast<uint64_t>(s.seed);
    // Validation batches have the training batch's size: the eval graph is as small as the step's.
    const int64_t batch = s.batch_size, eval_batch = s.batch_size, context = s.gpt.context, limit = s.test_limit;
    // Made once here so that a text too short for one window fails before anything is built.
    data::random_windows(train, batch, context, seed);
    data::consecutive_windows(validation, eval_batch, context, limit);
    TrainData d;
    d.train_input = [train, seed, batch, context] {
      return data::prefetch(data::random_windows(train, batch, context, seed));
    };
    d.eval_input = [validation, eval_batch, context, limit] {
      return data::prefetch(data::consecutive_windows(validation, eval_batch, context, limit));
    };
    char line[512];
    std::snprintf(line, sizeof line,
                  "data: %zu bytes from %zu file(s) in %s, vocabulary %zu bytes; %zu training and %zu validation tokens\n",
                  corpus.text.size(), corpus.files.size(), s.data.c_str(), corpus.vocabulary.size(), train->size(),
                  validation->size());
    d.summary = line;
    return d;
  }

  GptShape shape(const TrainSettings& s) const {
    GptShape shape = s.gpt;
    shape.vocabulary = static_cast<int64_t>(vocabulary_.size());
    return shape;
  }
  std::string vocabulary_;  // the text's distinct bytes, once loaded
};

}  // namespace

std::unique_ptr<Recipe> make_gpt_recipe() { return std::make_unique<GptRecipe>(); }

}  // namespace kiln
