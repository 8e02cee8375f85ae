// The seed's example in C++ (the seed's script, written against kiln's API; docs/cpp.md):
// ExperimentalConfig with accelerate_train_mode, RunConfig, Estimator, TellMeStepOrLossHook,
// train, evaluate. A user would copy this file.
//
//   ./build/examples/seed_example [max_steps] [model_dir] [accelerate_train_mode]
//   ./build/examples/seed_example 1200 /tmp/seed-model
//   ./build/examples/seed_example 10000 /tmp/seed-model 'fast|step|0.9'
//
// Run it twice with the same model_dir: the second run resumes from the checkpoint.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "kiln/train/config.h"
#include "kiln/data/dataset.h"
#include "kiln/base/error.h"
#include "kiln/train/estimator.h"
#include "kiln/train/hooks.h"
#include "kiln/models/models.h"
#include "kiln/train/optimizer.h"

namespace {

// model_fn: features -> MLP -> logits; loss, train op, predictions and metrics.
kiln::EstimatorSpec model_fn(const kiln::Tensor& features, const kiln::Tensor& labels, kiln::ModeKeys mode,
                             const kiln::Params& params) {
  using namespace kiln;
  Tensor h = features;
  for (int i = 0; i < 2; ++i) h = dense(h, 1024, "dense" + std::to_string(i), i, /*relu_after=*/true);
  const Tensor logits = dense(h, 10, "logits", 2, false);

  EstimatorSpec spec;
  spec.predictions["classes"] = argmax(logits, 1);
  if (mode == ModeKeys::predict) return spec;
  spec.loss = reduce_mean(sparse_softmax_cross_entropy(logits, labels)).named("loss");
  spec.eval_metrics["accuracy"] = accuracy_metric(labels, spec.predictions["classes"]);
  if (mode == ModeKeys::train)
    spec.train_op = make_momentum(params.number("learning_rate"), 0.9)->minimize(spec.loss);
  return spec;
}

}  // namespace

int main(int argc, char** argv) try {
  const int64_t max_steps = argc > 1 ? std::atoll(argv[1]) : 1200;
  const std::string model_dir = argc > 2 ? argv[2] : "seed_example_model";
  const std::string mode = argc > 3 ? argv[3] : "";  // e.g. "fast|step|0.9"

  // The seed: experimental_config = ExperimentalConfig(accelerate_train_mode="fast|step|0.9")
  //           config = NPURunConfig(experimental_config=experimental_config)
  kiln::ExperimentalConfig experimental_config{.accelerate_train_mode = mode};
  kiln::NPURunConfig config{.experimental_config = experimental_config, .model_dir = model_dir};
  config.random_seed = 0;

  // est = NPUEstimator(model_fn=model_fn, config=config, params=params)
  kiln::EstimatorOptions options;
  options.log = &std::cout;
  kiln::Estimator est(model_fn, config, kiln::Params{{"learning_rate", 0.05}}, options);

  auto train_data = std::make_shared<const kiln::data::Dataset>(kiln::data::load_fashion_mnist());
  auto test_data = std::make_shared<const kiln::data::Dataset>(
      kiln::data::load_fashion_mnist(kiln::data::kDefaultFashionMnistDir, kiln::data::Split::test));
  auto train_input_fn = [train_data] {
    return kiln::data::prefetch(kiln::data::batches(train_data, kiln::data::BatcherOptions::training(256, 0)));
  };
  auto eval_input_fn = [test_data] {
    return kiln::data::batches(test_data, kiln::data::BatcherOptions::evaluation(1000));
  };

  // my_hook = TellMeStepOrLossHook(step='global_step:0', total_step=max_steps)
  // my_hook = TellMeStepOrLossHook(loss='loss:0', final_loss=7.1)   (the loss split)
  auto my_hook = std::make_shared<kiln::TellMeStepOrLossHook>("global_step:0", max_steps);
  kiln::HookList hooks{my_hook};

  // est.train(input_fn=..., max_steps=max_steps, hooks=hooks)
  const kiln::TrainStats st = est.train(train_input_fn, max_steps, hooks);
  std::printf("trained %lld steps (global step %lld) in %.1fs, %.1f steps/s\n", static_cast<long long>(st.steps),
              static_cast<long long>(st.global_step), st.train_seconds, st.steps_per_second());

  const kiln::Evaluation ev = est.evaluate(eval_input_fn);
  std::printf("test loss %.4f, test accuracy %.4f\n", ev.at("loss"), ev.at("accuracy"));
  return 0;
} catch (const kiln::Error& e) {
  std::cerr << "seed_example: " << e.what() << "\n";
  return 2;
}
