// Issue 19, through the real `kiln` process: inputs that used to be accepted and then gave
// wrong or misleading results. Images of another size than the model's are refused before
// the first step (nothing written); --dry-run checks the paths a run would use; a NaN test
// loss is a failure (exit 1), not a result; a repeated option takes its last value; errors
// name the options the user typed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "kiln/data/dataset.h"
#include "support/run_kiln.h"
#include "support/dir_test.h"

namespace {
namespace fs = std::filesystem;
using testkit::contains;
using testkit::Result;
using testkit::run_kiln;

const std::string kShort = " --backend interp --steps 1 --train-limit 64 --test-limit 64 --batch-size 32 --quiet ";

using TrainInputs = testkit::DirTest;

// Fashion-MNIST's four files with n images of rows x cols.
void write_images(const fs::path& dir, int64_t rows, int64_t cols) {
  using kiln::data::IdxData;
  fs::create_directories(dir);
  const int64_t n = 64;
  for (const std::string prefix : {"train", "t10k"}) {
    IdxData images{{n, rows, cols}, std::vector<uint8_t>(static_cast<size_t>(n * rows * cols), 7)};
    IdxData labels{{n}, std::vector<uint8_t>(static_cast<size_t>(n), 3)};
    kiln::data::write_idx((dir / (prefix + "-images-idx3-ubyte.gz")).string(), images);
    kiln::data::write_idx((dir / (prefix + "-labels-idx1-ubyte.gz")).string(), labels);
  }
}

TEST_F(TrainInputs, ImagesOfAnotherSizeAreRefusedBeforeTheFirstStep) {
  write_images(dir_ / "data", 10, 10);
  for (const std::string model : {"mlp", "cnn"}) {
    const fs::path model_dir = dir_ / ("model-" + model);
    const Result r = run_kiln("train --model " + model + " --data " + (dir_ / "data").string() + kShort +
                              "--model-dir " + model_dir.string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_TRUE(contains(r.output, "[--data] the training images")) << r.output;
    EXPECT_TRUE(contains(r.output, "have 100 pixels each, but model " + model + " takes 28x28 = 784")) << r.output;
    EXPECT_FALSE(fs::exists(model_dir)) << "a refused run wrote " << model_dir;
  }
}

TEST_F(TrainInputs, DryRunChecksTheDataAndModelDirectories) {
  const Result missing = run_kiln("train --dry-run --data " + (dir_ / "nonexistent").string());
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_TRUE(contains(missing.output, "[--data]")) << missing.output;
  EXPECT_TRUE(contains(missing.output, "does not exist")) << missing.output;
  EXPECT_FALSE(contains(missing.output, "configuration is valid")) << missing.output;

  std::ofstream(dir_ / "a-file") << "x";
  const Result file = run_kiln("train --dry-run --model-dir " + (dir_ / "a-file").string());
  EXPECT_EQ(file.status, 2) << file.output;
  EXPECT_TRUE(contains(file.output, "[--model-dir]")) << file.output;
  EXPECT_TRUE(contains(file.output, "is a file, not a directory")) << file.output;

  const Result under = run_kiln("train --dry-run --model-dir " + (dir_ / "a-file" / "model").string());
  EXPECT_EQ(under.status, 2) << under.output;
  EXPECT_TRUE(contains(under.output, "cannot be created")) << under.output;
}

TEST_F(TrainInputs, ANanTestLossFailsTheRun) {
  if (!testkit::have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  // One step at an absurd rate (finite in float32): the step's own loss is finite, the weights after it are not.
  const fs::path metrics = dir_ / "m.jsonl";
  const Result r = run_kiln("train" + kShort + "--learning-rate 1e38 --metrics-out " + metrics.string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "[evaluate] the test loss is nan")) << r.output;
  EXPECT_TRUE(contains(testkit::read_file(metrics), "\"test_loss\":null")) << testkit::read_file(metrics);
}

TEST_F(TrainInputs, ARepeatedOptionTakesItsLastValue) {
  const Result r = run_kiln("train --dry-run --batch-size 64 --steps 10 --batch-size 32 --seed 1 --seed 2");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "batch 32")) << r.output;
  EXPECT_TRUE(contains(r.output, "seed 2")) << r.output;
}

TEST_F(TrainInputs, ErrorsNameTheOptionsTheUserTyped) {
  const std::pair<std::string, std::string> cases[] = {
      {"--iterations-per-loop 0", "[--iterations-per-loop]"},
      {"--save-checkpoints-steps -1", "[--save-checkpoints-steps]"},
      {"--keep-checkpoint-max -1", "[--keep-checkpoint-max]"},
      {"--threads -2", "[--threads]"},
      {"--accelerate-loss-window 0 --accelerate-train-mode 'fast1|loss' --final-loss 0.3", "[--accelerate-loss-window]"},
  };
  for (const auto& [args, says] : cases) {
    const Result r = run_kiln("train --dry-run " + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, says)) << args << ": expected '" << says << "' in\n" << r.output;
    EXPECT_FALSE(contains(r.output, "_")) << args << ": an internal field name in\n" << r.output;
  }
}

}  // namespace
