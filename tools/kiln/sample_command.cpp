#include "sample_command.h"

#include <cstdio>
#include <filesystem>

#include "kiln/backend/backend.h"
#include "kiln/train/checkpoint.h"
#include "kiln/base/error.h"
#include "kiln/data/text_data.h"

namespace kiln::cli {
namespace {

// The model and vocabulary `kiln train --model gpt` recorded in a checkpoint's run settings.
struct SavedGpt {
  GptShape shape;
  std::string vocabulary;
};

SavedGpt saved_gpt(const std::string& dir) {
  if (!std::filesystem::is_directory(dir))
    KILN_THROW(CheckpointError) << "[model_dir] '" << dir << "' is not a directory";
  const std::optional<Checkpoint> ckpt = CheckpointDir(dir, 0).load_latest();
  if (!ckpt) KILN_THROW(CheckpointError) << "[model_dir] '" << dir << "' holds no checkpoint: train with --model-dir first";
  const nlohmann::json& run = ckpt->state.contains("run") ? ckpt->state["run"] : nlohmann::json::object();
  if (!run.is_object() || run.value("--model", std::string()) != kGptModelName || !run.contains("vocabulary"))
    KILN_THROW(CheckpointError) << "[model_dir] the checkpoint at step " << ckpt->step << " in '" << dir
                                << "' is not of a gpt trained by `kiln train --model gpt` (it records no gpt sizes and "
                                   "vocabulary)";
  SavedGpt g;
  try {
    g.vocabulary = data::vocabulary_from_hex(run.at("vocabulary").get<std::string>());
    g.shape.layers = run.at("--layers").get<int64_t>();
    g.shape.heads = run.at("--heads").get<int64_t>();
    g.shape.width = run.at("--width").get<int64_t>();
    g.shape.context = run.at("--context").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    KILN_THROW(CheckpointError) << "[model_dir] the gpt settings of the checkpoint in '" << dir << "' are damaged: " << e.what();
  } catch (const DataError& e) {
    KILN_THROW(CheckpointError) << "[model_dir] the vocabulary of the checkpoint in '" << dir << "' is damaged: " << e.what();
  }
  g.shape.vocabulary = static_cast<int64_t>(g.vocabulary.size());
  validate(g.shape);
  return g;
}

}  // namespace

SampleCommand::SampleCommand(CLI::App& parent) {
  backend_ = std::string(backend_name(kDefaultBackend));
  cmd_ = parent.add_subcommand("sample", "Generate text with a gpt trained by `kiln train --model gpt --model-dir DIR`");
  cmd_->add_option("--model-dir", model_dir_, "Model directory holding the gpt's checkpoints")->required();
  cmd_->add_option("--prompt", options_.prompt, "Text to continue (every byte must occur in the training text)")
      ->capture_default_str();
  cmd_->add_option("--length", options_.length, "Bytes to generate")->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  cmd_->add_option("--seed", options_.seed, "Seed of the draws (the same seed gives the same text)")->capture_default_str();
  cmd_->add_option("--temperature", options_.temperature, "Divides the logits: below 1 greedier, above 1 more random")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd_->add_option("--backend", backend_, "Execution backend")->check(CLI::IsMember(backend_names()))->capture_default_str();
}

int SampleCommand::run() {
  const SavedGpt g = saved_gpt(model_dir_);
  data::encode_text(g.vocabulary, options_.prompt);  // a byte the model never saw: an error before compiling
  RunConfig config;
  config.model_dir = model_dir_;
  EstimatorOptions eo;
  eo.backend = parse_backend(backend_);
  Estimator est(gpt_model_fn(g.shape, 0), config, {}, eo);
  const std::string text = sample_text(est, g.shape, g.vocabulary, options_);
  std::fwrite(options_.prompt.data(), 1, options_.prompt.size(), stdout);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
  return 0;
}

}  // namespace kiln::cli
