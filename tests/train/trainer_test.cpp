#include "kiln/trainer.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/error.h"

namespace kiln {
namespace {

bool have_fashion_mnist() { return std::filesystem::exists(std::string(data::kDefaultFashionMnistDir) + "/train-images-idx3-ubyte.gz"); }

// A short run on a subset must reduce the loss and beat chance clearly on held-out data.
TEST(Trainer, ShortMlpRunReducesLossOnFashionMnist) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const data::Dataset train = data::take(data::load_fashion_mnist(data::kDefaultFashionMnistDir, data::Split::train), 4096);
  const data::Dataset test = data::take(data::load_fashion_mnist(data::kDefaultFashionMnistDir, data::Split::test), 1000);
  TrainOptions opt;
  opt.steps = 60;
  opt.batch_size = 64;
  opt.log_every = 0;
  ClassifierTrainer trainer(mlp_model({128}, 10, 0), train.feature_dim(), 10, opt);
  const EvalResult before = trainer.evaluate(test);
  const TrainResult r = trainer.train(train);
  const EvalResult after = trainer.evaluate(test);
  ASSERT_EQ(r.losses.size(), 60u);
  EXPECT_EQ(r.steps, 60);
  double first = 0, last = 0;
  for (int i = 0; i < 10; ++i) {
    first += r.losses[i];
    last += r.losses[50 + i];
  }
  EXPECT_LT(last, 0.6 * first);
  EXPECT_LT(after.loss, before.loss);
  EXPECT_GT(after.accuracy, 0.6);
  EXPECT_EQ(after.examples, 1000);
}

data::Dataset synthetic(int64_t n, uint64_t seed) {
  // Two Gaussian-ish blobs separable by the sign of the first feature.
  Array x(DType::f32, {n, 8});
  Array y(DType::i32, {n});
  uint64_t s = seed;
  auto next = [&] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(s >> 11) / 9007199254740992.0 - 0.5;
  };
  for (int64_t i = 0; i < n; ++i) {
    const int label = static_cast<int>(i % 2);
    for (int64_t j = 0; j < 8; ++j) x.set(i * 8 + j, next() + (j == 0 ? (label ? 1.0 : -1.0) : 0.0));
    y.set(i, label);
  }
  return data::Dataset::from_memory(std::move(x), std::move(y));
}

TEST(Trainer, SameSeedGivesTheSameLossSequence) {
  const data::Dataset ds = synthetic(256, 3);
  TrainOptions opt;
  opt.steps = 15;
  opt.batch_size = 32;
  opt.log_every = 0;
  for (const char* optimizer : {"sgd", "momentum", "adam"}) {
    opt.optimizer = optimizer;
    opt.learning_rate = std::string(optimizer) == "adam" ? 0.01 : 0.1;
    ClassifierTrainer a(mlp_model({16}, 2, 7), 8, 2, opt), b(mlp_model({16}, 2, 7), 8, 2, opt);
    const TrainResult ra = a.train(ds), rb = b.train(ds);
    EXPECT_EQ(ra.losses, rb.losses) << optimizer;
    EXPECT_LT(ra.losses.back(), ra.losses.front()) << optimizer;
    opt.seed = 1;
    ClassifierTrainer c(mlp_model({16}, 2, 8), 8, 2, opt);
    EXPECT_NE(c.train(ds).losses, ra.losses) << optimizer;
    opt.seed = 0;
  }
}

TEST(Trainer, BadOptionsAreConfigErrors) {
  TrainOptions opt;
  opt.batch_size = 0;
  EXPECT_THROW(ClassifierTrainer(mlp_model({4}, 2, 0), 8, 2, opt), ConfigError);
  opt.batch_size = 4;
  opt.optimizer = "rmsprop";
  try {
    ClassifierTrainer t(mlp_model({4}, 2, 0), 8, 2, opt);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("[optimizer] unknown optimizer 'rmsprop'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
