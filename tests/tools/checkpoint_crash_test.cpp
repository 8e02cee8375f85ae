// Deterministic crash tests of the checkpoint writer: KILN_CHECKPOINT_FAILPOINT kills
// `kiln train` by SIGKILL at each stage of a save, and a resumed run must see exactly the
// checkpoints that were complete, clean up the dead run's temporary file and end with the
// same weights as a run that was never killed. Also on the compiled backend, for the
// float16 (`fast`) and bfloat16 (`fast1`) modes killed before and after their switch.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "kiln/train/checkpoint.h"
#include "support/run_kiln.h"
#include "support/temp_files.h"

namespace {
namespace fs = std::filesystem;
using testkit::contains;
using testkit::have_data;
using testkit::Result;
using testkit::run_command;

// Twelve small steps, a checkpoint every three; the accelerated modes switch at step 6.
std::string train_args(const std::string& backend, const std::string& mode, const fs::path& model_dir,
                       const fs::path& cache) {
  std::string a = std::string(KILN_BINARY) + " train --backend " + backend +
                  " --batch-size 16 --train-limit 512 --test-limit 200 --steps 12 --log-every 0 --seed 5"
                  " --save-checkpoints-steps 3 --keep-checkpoint-max 0 --model-dir " +
                  model_dir.string() + " --graph-compiler-cache-dir " + cache.string();
  if (!mode.empty()) a += " --accelerate-train-mode '" + mode + "'";
  return a;
}

kiln::Variables final_weights(const fs::path& model_dir) {
  const kiln::CheckpointDir dir(model_dir.string(), 0);
  const auto latest = dir.latest_step();
  if (!latest) return {};
  return kiln::load_checkpoint(dir.path_for(*latest)).variables;
}

void expect_same_bits(const kiln::Variables& got, const kiln::Variables& want, const std::string& what) {
  ASSERT_FALSE(want.empty()) << what;
  ASSERT_EQ(got.size(), want.size()) << what;
  for (const auto& [name, w] : want) {
    ASSERT_TRUE(got.count(name)) << what << ": no " << name;
    const kiln::Array& g = got.at(name);
    ASSERT_EQ(g.nbytes(), w.nbytes()) << what << ": " << name;
    EXPECT_EQ(std::memcmp(g.bytes(), w.bytes(), w.nbytes()), 0) << what << ": " << name << " differs";
  }
}

int temp_files(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().rfind(".tmp-", 0) == 0;
  return n;
}

struct Case {
  std::string backend, mode, point;
  int64_t at;             // the step whose save dies
  int64_t survivor;       // the newest checkpoint a resumed run must find
  bool leaves_temp_file;  // a dead run's .tmp- file is left behind (and removed on resume)
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string mode = info.param.mode.empty() ? "original" : info.param.mode.substr(0, info.param.mode.find('|'));
  return info.param.backend + "_" + mode + "_" + info.param.point + "_at_" + std::to_string(info.param.at);
}

class CheckpointCrash : public ::testing::TestWithParam<Case> {};

TEST_P(CheckpointCrash, ResumeSeesOnlyCompleteCheckpointsAndEndsWithTheSameWeights) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const Case& c = GetParam();
  const fs::path root = testkit::fresh_dir("ckpt-crash");
  const fs::path cache = root / "cache";  // the straight run compiles, the others load

  const Result straight = run_command(train_args(c.backend, c.mode, root / "straight", cache) + " 2>&1");
  ASSERT_EQ(straight.status, 0) << straight.output;

  const std::string failpoint = "KILN_CHECKPOINT_FAILPOINT=" + c.point + "@" + std::to_string(c.at) + " ";
  const Result crashed = run_command(failpoint + train_args(c.backend, c.mode, root / "model", cache) + " 2>&1");
  EXPECT_TRUE(crashed.status == -1 || crashed.status == 128 + 9) << "not killed at the failpoint: " << crashed.output;
  const kiln::CheckpointDir dir((root / "model").string(), 0);
  ASSERT_EQ(dir.latest_step(), std::optional<int64_t>(c.survivor)) << crashed.output;
  EXPECT_EQ(temp_files(root / "model"), c.leaves_temp_file ? 1 : 0);
  for (int64_t s : dir.steps()) EXPECT_NO_THROW(kiln::load_checkpoint(dir.path_for(s))) << "step " << s;

  const Result resumed = run_command(train_args(c.backend, c.mode, root / "model", cache) + " 2>&1");
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_TRUE(contains(resumed.output, "resumed from checkpoint at step " + std::to_string(c.survivor)))
      << resumed.output;
  EXPECT_EQ(temp_files(root / "model"), 0) << "the dead run's temporary file is still there";
  expect_same_bits(final_weights(root / "model"), final_weights(root / "straight"),
                   "killed at " + c.point + "@" + std::to_string(c.at) + ", resumed");
  fs::remove_all(root);
}

// Every stage of a save, on the interpreter; the step-6 save dies, so a resumed run
// finds step 3 until the rename has happened and step 6 after it.
INSTANTIATE_TEST_SUITE_P(EveryStage, CheckpointCrash,
                         ::testing::Values(Case{"interp", "", "written", 6, 3, true},
                                           Case{"interp", "", "fsynced", 6, 3, true},
                                           Case{"interp", "", "renamed", 6, 6, false},
                                           Case{"interp", "", "saved", 6, 6, false}),
                         case_name);

// The compiled backend in the low-precision modes, killed in the low phase (a save at 3
// completes, the next step dies) and in the original phase (after the switch at 6).
INSTANTIATE_TEST_SUITE_P(CompiledAccelerated, CheckpointCrash,
                         ::testing::Values(Case{"cpu", "fast1|step|0.5", "written", 6, 3, true},
                                           Case{"cpu", "fast1|step|0.5", "saved", 9, 9, false},
                                           Case{"cpu", "fast|step|0.5", "written", 6, 3, true},
                                           Case{"cpu", "fast|step|0.5", "saved", 9, 9, false}),
                         case_name);

}  // namespace
