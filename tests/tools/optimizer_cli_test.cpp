// `kiln train`'s optimizer options: accepted combinations, every option that would do
// nothing rejected by name, and each setting reaching the compiled step.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/run_kiln.h"

namespace {

using testkit::contains;
using testkit::Result;
using testkit::run_kiln;

TEST(OptimizerCli, DryRunDescribesTheResolvedOptimizer) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "momentum lr 0.05, momentum 0.9,"},
      {"--optimizer adamw --learning-rate-schedule cosine --warmup-steps 10 --final-learning-rate 0.001 --clip-norm 1"
       " --weight-decay 0.1 --beta2 0.99 --steps 100",
       "adamw lr 0.05 (cosine 0.05 to 0.001 at step 100, warm-up 10 steps), weight decay 0.1, betas 0.9/0.99, clip 1"},
      {"--optimizer adamw", "adamw lr 0.05, weight decay 0.01, betas 0.9/0.999,"},
      {"--optimizer adam --learning-rate-schedule cosine --decay-steps 500 --steps 100",
       "adam lr 0.05 (cosine 0.05 to 0 at step 500), betas"},
      {"--optimizer sgd --warmup-steps 5", "sgd lr 0.05 (constant, warm-up 5 steps),"},
      // gpt's recipe, and its warm-up shrunk to a tenth of a run shorter than it
      {"--model gpt", "adamw lr 0.001 (cosine 0.001 to 0.0001 at step 2000, warm-up 100 steps), weight decay 0.1, "
                      "betas 0.9/0.99, clip 1"},
      {"--model gpt --steps 50", "(cosine 0.001 to 0.0001 at step 50, warm-up 5 steps)"},
      {"--model gpt --optimizer adam", "adam lr 0.001 (cosine 0.001 to 0.0001 at step 2000, warm-up 100 steps), betas "
                                       "0.9/0.999, clip 1"},
  };
  for (const auto& [args, description] : cases) {
    const Result r = run_kiln(std::string("train --dry-run ") + args);
    EXPECT_EQ(r.status, 0) << args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, description)) << args << "\n" << r.output;
  }
}

TEST(OptimizerCli, OptionsThatWouldDoNothingAreErrorsNamingTheOption) {
  const std::pair<const char*, const char*> invalid[] = {
      {"--optimizer adam --momentum 0.5", "[--momentum] applies to the momentum optimizer only; the optimizer is 'adam'"},
      {"--beta1 0.8", "[--beta1] applies to adam and adamw only; the optimizer is 'momentum'"},
      {"--optimizer sgd --epsilon 1e-6", "[--epsilon]"},
      {"--weight-decay 0.1", "[--weight-decay] decoupled weight decay is AdamW's"},
      {"--decay-steps 50", "[--decay-steps] applies to the cosine schedule only"},
      {"--final-learning-rate 0.001", "[--final-learning-rate] applies to the cosine schedule only"},
      {"--learning-rate-schedule cosine --warmup-steps 200 --steps 100", "[--decay-steps]"},
      {"--learning-rate-schedule cosine --final-learning-rate 1", "[--final-learning-rate]"},
      {"--model gpt --steps 50 --warmup-steps 60", "[--decay-steps] '50' must come after the end of the warm-up"},
  };
  for (const auto& [args, message] : invalid) {
    const Result r = run_kiln(std::string("train --dry-run ") + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, message)) << args << "\n" << r.output;
  }
  for (const char* args : {"--beta2 1", "--momentum -0.1", "--clip-norm -1", "--weight-decay nan",
                           "--learning-rate-schedule linear", "--optimizer rmsprop", "--warmup-steps 1.5"}) {
    const Result r = run_kiln(std::string("train --dry-run ") + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
  }
}

// A rate float32 cannot hold trains nothing (0) or NaN (inf): an error naming the option,
// the value and the range, not a run that learns nothing.
TEST(OptimizerCli, RatesFloat32CannotHoldAreErrorsNamingTheRange) {
  const std::pair<const char*, const char*> invalid[] = {
      {"--learning-rate 1e-320", "[--learning-rate] '1e-320' vanishes (0, or a subnormal the CPU flushes to 0) in "
                                 "float32, the precision training runs in; valid: 1.17549e-38 to 3.40282e+38"},
      {"--learning-rate 1e-39", "[--learning-rate] '1e-39' vanishes"},
      {"--learning-rate 1e39", "[--learning-rate] '1e+39' is inf in float32"},
      {"--learning-rate-schedule cosine --final-learning-rate 1e-45", "[--final-learning-rate] '1e-45' vanishes"},
  };
  for (const auto& [args, message] : invalid) {
    const Result r = run_kiln(std::string("train --dry-run ") + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, message)) << args << "\n" << r.output;
  }
  EXPECT_EQ(run_kiln("train --dry-run --learning-rate 1.2e-38").status, 0);  // the smallest normal float32 and up
}

// The `key` of a run's progress records, one per step.
std::vector<double> progress(const std::string& args, const char* key = "loss") {
  const auto path = std::filesystem::temp_directory_path() / ("kiln-optcli-" + std::to_string(getpid()) + ".jsonl");
  const Result r = run_kiln(args + " --log-every 1 --quiet --metrics-out " + path.string());
  EXPECT_EQ(r.status, 0) << args << "\n" << r.output;
  std::vector<double> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto rec = nlohmann::json::parse(line);
    if (rec["event"] == "progress") out.push_back(rec[key].get<double>());
  }
  std::filesystem::remove(path);
  return out;
}

// One fixed batch (the train set is the batch), so the loss changes only through the
// updates: a warm-up of a billion steps or a clip to 1e-9 leaves it flat, while the same run without them learns, with the
// same losses on both backends (AdamW, the cosine schedule and clipping compiled alike).
TEST(OptimizerCli, WarmUpAndClippingReachTheStep) {
  if (!testkit::have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  std::vector<double> learned[2];
  for (int b = 0; b < 2; ++b) {
    const std::string backend = b == 0 ? "interp" : "cpu";
    const std::string base = "train --backend " + backend +
                             " --steps 8 --batch-size 32 --train-limit 32 --test-limit 100 --optimizer adamw"
                             " --learning-rate 0.001 --learning-rate-schedule cosine";
    learned[b] = progress(base + " --weight-decay 0.1 --clip-norm 5");
    ASSERT_EQ(learned[b].size(), 8u) << backend;
    EXPECT_LT(learned[b].back(), learned[b].front() * 0.7) << backend;
    // (Clipping is tried with momentum: Adam divides the clipped gradient by its own scale,
    // so a tiny norm still moves the weights by up to lr * g / epsilon.)
    for (const char* frozen : {" --warmup-steps 1000000000 --decay-steps 2000000000",
                               " --clip-norm 1e-9 --optimizer momentum"}) {
      const std::vector<double> flat = progress(base + frozen);
      ASSERT_EQ(flat.size(), 8u) << backend << frozen;
      for (double l : flat) EXPECT_NEAR(l, flat.front(), 1e-4 * flat.front()) << backend << frozen;
    }
  }
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(learned[0][i], learned[1][i], 1e-4 * learned[0][i]) << "step " << i + 1;
}

TEST(OptimizerCli, ProgressRecordsCarryTheScheduledLearningRate) {
  if (!testkit::have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const std::vector<double> rates =
      progress("train --backend interp --steps 6 --batch-size 32 --train-limit 64 --test-limit 100 --optimizer sgd"
               " --learning-rate 0.1 --learning-rate-schedule cosine --warmup-steps 2 --final-learning-rate 0.01",
               "learning_rate");
  // warm-up 0.05, 0.1; then cosine over steps 2..6 from 0.1 to 0.01
  const double expect[] = {0.05, 0.1, 0.1, 0.01 + 0.09 * (1 + std::cos(M_PI / 4)) / 2, 0.055,
                           0.01 + 0.09 * (1 + std::cos(3 * M_PI / 4)) / 2};
  ASSERT_EQ(rates.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(rates[i], expect[i], 1e-12) << i;
}

}  // namespace
