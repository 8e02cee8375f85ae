// Issue 19: what a resumed `kiln train` says and does when the new run differs from the
// one that wrote the checkpoint. Changed settings that decide the batches and updates
// (seed, batch size, learning rate, train limit) are named in a warning; the same
// settings give none. A run that had switched to the original precision stays there when
// resumed under another accelerate_train_mode: the switch is one way.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/run_kiln.h"
#include "support/dir_test.h"

namespace {
namespace fs = std::filesystem;
using testkit::contains;
using testkit::Result;
using testkit::run_kiln;

const std::string kRun = "train --backend interp --test-limit 64 --log-every 0 --quiet ";

class ResumeSettings : public testkit::DirTest {
 protected:
  void SetUp() override {
    if (!testkit::have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    DirTest::SetUp();
  }
  std::string model_dir() const { return " --model-dir " + (dir_ / "model").string() + " "; }
};

TEST_F(ResumeSettings, ChangedSettingsAreNamedInAWarning) {
  const std::string first = "--seed 0 --batch-size 32 --learning-rate 0.05 --train-limit 256 ";
  ASSERT_EQ(run_kiln(kRun + first + "--steps 2" + model_dir()).status, 0);
  const Result same = run_kiln(kRun + first + "--steps 3" + model_dir());
  EXPECT_EQ(same.status, 0) << same.output;
  EXPECT_FALSE(contains(same.output, "warning")) << same.output;

  const Result changed =
      run_kiln(kRun + "--seed 1 --batch-size 16 --learning-rate 0.1 --train-limit 128 --steps 4" + model_dir());
  EXPECT_EQ(changed.status, 0) << changed.output;
  for (const char* s : {"warning: resumed at step 3 with other settings", "--seed 0 -> 1", "--batch-size 32 -> 16",
                        "--learning-rate 0.05 -> 0.1", "--train-limit 256 -> 128",
                        "the batch order and the updates no longer match an uninterrupted run"})
    EXPECT_TRUE(contains(changed.output, s)) << "expected '" << s << "' in\n" << changed.output;
}

TEST_F(ResumeSettings, ThePrecisionSwitchIsOneWayAcrossAChangedMode) {
  // 0.2 of 5 steps: the first run switches at step 1 and saves at step 5 in phase original.
  const Result first = run_kiln(kRun + "--batch-size 32 --train-limit 256 --steps 5 --accelerate-train-mode "
                                       "'fast1|step|0.2'" + model_dir());
  ASSERT_EQ(first.status, 0) << first.output;
  // 0.9 of 10 steps would run steps 5..8 low: it must not.
  const fs::path metrics = dir_ / "m.jsonl";
  const Result second = run_kiln("train --backend interp --test-limit 64 --log-every 0 --batch-size 32 --train-limit 256 "
                                 "--steps 10 --accelerate-train-mode 'fast1|step|0.9' --metrics-out " +
                                 metrics.string() + model_dir());
  EXPECT_EQ(second.status, 0) << second.output;
  EXPECT_TRUE(contains(second.output, "the switch is one way")) << second.output;
  std::ifstream in(metrics);
  std::string line, last;
  while (std::getline(in, line)) last = line;
  const nlohmann::json final = nlohmann::json::parse(last);
  EXPECT_EQ(final["accelerate"]["low_steps"], 0) << last;
  EXPECT_EQ(final["accelerate"]["original_steps"], 5) << last;
}

}  // namespace
