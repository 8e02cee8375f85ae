// `kiln train --accelerate-train-mode` as a user meets it: the phase and the switch on the
// console and in the metrics, and a run killed with SIGKILL before and after the switch
// that resumes in the right phase and ends exactly where an uninterrupted run ends.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <fstream>

#include <nlohmann/json.hpp>

#include "kiln/train/checkpoint.h"
#include "kiln/train/config.h"
#include "kiln/backend/cpu_features.h"
#include "support/run_kiln.h"
#include "support/temp_files.h"

namespace {
namespace fs = std::filesystem;
using testkit::contains;
using testkit::Result;
using testkit::run_kiln;

using testkit::have_data;

std::vector<nlohmann::json> records(const fs::path& metrics) {
  std::ifstream in(metrics);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

const std::string kBase =
    "train --backend interp --batch-size 32 --train-limit 2000 --test-limit 500 --log-every 10 ";

TEST(AccelerateCli, ReportsThePhaseTheSwitchAndTheTimePerPhase) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const fs::path dir = testkit::fresh_dir("accelerate-cli");
  fs::create_directories(dir);
  const fs::path m = dir / "m.jsonl";
  const Result r = run_kiln(kBase + "--steps 30 --iterations-per-loop 4 --accelerate-train-mode 'fast1|step|0.57' "
                                    "--metrics-out " + m.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "phase mixed_bfloat16")) << r.output;
  EXPECT_TRUE(contains(r.output, "phase original")) << r.output;
  EXPECT_TRUE(contains(r.output, "precision switch: mixed_bfloat16 -> original at step 17 (requested 17, step)"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "accelerate: mixed_bfloat16 17 steps in")) << r.output;
  EXPECT_TRUE(contains(r.output, "saved against") || contains(r.output, "lost against")) << r.output;
  // Once, at start-up, where this CPU has no bfloat16 arithmetic.
  const std::string note =
      kiln::accelerate_hardware_note(kiln::AccelerateTrainMode::parse("fast1|step|0.57"), kiln::cpu_features(), false);
  if (note.empty())
    EXPECT_FALSE(contains(r.output, "kiln: note: accelerate_train_mode")) << r.output;
  else
    EXPECT_TRUE(contains(r.output, "kiln: note: " + note + "\n")) << r.output;
  const auto recs = records(m);
  int switches = 0;
  for (const auto& rec : recs)
    if (rec["event"] == "precision_switch") {
      ++switches;
      EXPECT_EQ(rec["step"], 17);
      EXPECT_EQ(rec["requested_step"], 17);
    }
  EXPECT_EQ(switches, 1);
  const auto& a = recs.back()["accelerate"];
  EXPECT_EQ(a["switch_step"], 17);
  EXPECT_EQ(a["low_steps"], 17);
  EXPECT_EQ(a["original_steps"], 13);
  EXPECT_EQ(a["mode"], "fast1|step|0.57");
  for (const char* key : {"low_steps_per_second", "original_steps_per_second", "seconds_saved", "low_seconds"})
    EXPECT_TRUE(a.contains(key)) << key;
  fs::remove_all(dir);
}

// `kiln <args>` killed by SIGKILL right after it saved the checkpoint of `step` (the
// checkpoint failpoint): a kill at a known step, not at a moment chosen by a timer.
Result killed_after_saving(const std::string& args, int64_t step) {
  return testkit::run_command("KILN_CHECKPOINT_FAILPOINT=saved@" + std::to_string(step) + " " +
                              std::string(KILN_BINARY) + " " + args + " 2>&1");
}

TEST(AccelerateCli, KilledBeforeAndAfterTheSwitchResumesInTheRightPhase) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const fs::path root = testkit::fresh_dir("accelerate-resume");
  fs::create_directories(root);
  const fs::path model_dir = root / "model";
  // fast (float16 with loss scaling): the scaler's state must survive the kill too.
  const std::string args = kBase + "--steps 60 --accelerate-train-mode 'fast|step|0.5' --save-checkpoints-steps 5 "
                                   "--keep-checkpoint-max 0 --model-dir " + model_dir.string();
  const kiln::CheckpointDir dir(model_dir.string(), 0);

  // Killed before the switch (step 30), right after saving step 10.
  const Result first = killed_after_saving(args, 10);
  ASSERT_EQ(dir.latest_step(), std::optional<int64_t>(10)) << first.output;
  const auto state10 = kiln::load_checkpoint(dir.path_for(10)).state;
  EXPECT_EQ(state10["phase"], "mixed_float16") << state10.dump();
  EXPECT_EQ(state10["accelerate_train_mode"], "fast|step|0.5");
  EXPECT_TRUE(state10.contains("loss_scaler")) << state10.dump();
  // Resumed, then killed after the switch, right after saving step 35.
  const Result second = killed_after_saving(args, 35);
  EXPECT_TRUE(contains(second.output, "resumed in phase mixed_float16 at step 10")) << second.output;
  ASSERT_EQ(dir.latest_step(), std::optional<int64_t>(35)) << second.output;
  const auto state35 = kiln::load_checkpoint(dir.path_for(35)).state;
  EXPECT_EQ(state35["phase"], "original") << state35.dump();
  EXPECT_EQ(state35["switch_step"], 30) << state35.dump();
  // Resumed after the switch: stays in the original precision.
  const Result last = run_kiln(args + " --metrics-out " + (root / "resumed.jsonl").string());
  ASSERT_EQ(last.status, 0) << last.output;
  EXPECT_TRUE(contains(last.output, "resumed in phase original (switched at step 30, step)")) << last.output;
  EXPECT_FALSE(contains(last.output, "phase mixed_float16")) << last.output;

  // An uninterrupted run ends in exactly the same state.
  const Result straight = run_kiln(kBase + "--steps 60 --accelerate-train-mode 'fast|step|0.5' --metrics-out " +
                                   (root / "straight.jsonl").string());
  ASSERT_EQ(straight.status, 0) << straight.output;
  const auto resumed = records(root / "resumed.jsonl").back(), uninterrupted = records(root / "straight.jsonl").back();
  EXPECT_EQ(resumed["final_loss"], uninterrupted["final_loss"]);
  EXPECT_EQ(resumed["test_accuracy"], uninterrupted["test_accuracy"]);
  EXPECT_EQ(uninterrupted["accelerate"]["switch_step"], 30);
  fs::remove_all(root);
}

TEST(AccelerateCli, LossSplitNeedsTheFinalLoss) {
  const Result r = run_kiln("train --steps 5 --accelerate-train-mode 'fast1|loss|1.05'");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "[--final-loss]")) << r.output;
  EXPECT_TRUE(contains(r.output, "--final-loss")) << r.output;
}

}  // namespace
