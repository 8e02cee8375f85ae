// Two `kiln train` processes with one --model-dir (issue 19): the second is refused with
// exit status 2 naming the directory and the holder, the first trains on unharmed, and no
// run deletes another live process's temporary files.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "kiln/train/checkpoint.h"
#include "kiln/train/model_dir_lock.h"
#include "support/processes.h"
#include "support/run_kiln.h"
#include "support/temp_files.h"

namespace {
namespace fs = std::filesystem;
using testkit::contains;
using testkit::Result;
using testkit::run_kiln;
using testkit::wait_for;

using testkit::have_data;

const std::string kRun = "train --backend interp --batch-size 32 --train-limit 2000 --test-limit 500 --log-every 0 ";

int exit_status(pid_t pid) {
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 1000 + WTERMSIG(st) : -1;  // 1000+: killed by a signal
}

TEST(TrainLock, ASecondRunOnTheSameModelDirExitsTwoNamingTheHolder) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const fs::path t = testkit::fresh_dir("train-lock"), dir = t / "model";
  fs::create_directories(t);
  const kiln::CheckpointDir ckpts(dir.string(), 0);
  const pid_t first = testkit::spawn_kiln(kRun + "--steps 100000 --save-checkpoints-steps 2 --model-dir " + dir.string(),
                                          (t / "first.log").string());
  ASSERT_TRUE(wait_for([&] { return ckpts.latest_step().value_or(0) >= 2; })) << testkit::read_file(t / "first.log");

  const Result second = run_kiln(kRun + "--steps 50 --save-checkpoints-steps 2 --model-dir " + dir.string());
  EXPECT_EQ(second.status, 2) << second.output;
  EXPECT_TRUE(contains(second.output, "kiln: error: [--model-dir] '" + dir.string() +
                                          "' is in use by another training run (pid " + std::to_string(first) + " on host "))
      << second.output;

  // The first run is unharmed: it keeps writing checkpoints, every one complete.
  const int64_t seen = *ckpts.latest_step();
  EXPECT_TRUE(wait_for([&] { return ckpts.latest_step().value_or(0) > seen; })) << testkit::read_file(t / "first.log");
  // Killed outright (the lock is the kernel's: it goes with the process; Ctrl-C has its own
  // tests in train_resume_test.cpp).
  kill(first, SIGKILL);
  EXPECT_EQ(exit_status(first), 1000 + SIGKILL) << testkit::read_file(t / "first.log");
  for (int64_t s : ckpts.steps()) EXPECT_NO_THROW(kiln::load_checkpoint(ckpts.path_for(s))) << s;

  // With the holder gone the directory is free again, and the dead run's temporary file
  // (if the kill came mid-save) is cleaned by the next save.
  const int64_t last = *ckpts.latest_step();
  const Result third = run_kiln(kRun + "--steps " + std::to_string(last + 2) + " --model-dir " + dir.string());
  EXPECT_EQ(third.status, 0) << third.output;
  EXPECT_TRUE(contains(third.output, "resumed from checkpoint at step " + std::to_string(last))) << third.output;
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_NE(e.path().filename().string().rfind(".tmp-", 0), 0u) << e.path();
  fs::remove_all(t);
}

TEST(TrainLock, TwoRunsStartedTogetherOneTrainsTheOtherIsRefused) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const fs::path t = testkit::fresh_dir("train-lock-together"), dir = t / "model";
  fs::create_directories(t);
  const std::string args = kRun + "--steps 100000 --save-checkpoints-steps 3 --model-dir " + dir.string();
  const pid_t a = testkit::spawn_kiln(args, (t / "a.log").string());
  const pid_t b = testkit::spawn_kiln(args, (t / "b.log").string());
  // The refused one exits by itself; the other trains until interrupted.
  int st = 0;
  pid_t refused = -1;
  ASSERT_TRUE(wait_for([&] {
    for (pid_t p : {a, b})
      if (waitpid(p, &st, WNOHANG) == p) refused = p;
    return refused > 0;
  }));
  const pid_t winner = refused == a ? b : a;
  const std::string refused_log = testkit::read_file(t / (refused == a ? "a.log" : "b.log"));
  ASSERT_TRUE(WIFEXITED(st)) << refused_log;
  EXPECT_EQ(WEXITSTATUS(st), 2) << refused_log;
  EXPECT_TRUE(contains(refused_log, "is in use by another training run (pid " + std::to_string(winner))) << refused_log;
  const kiln::CheckpointDir ckpts(dir.string(), 0);
  EXPECT_TRUE(wait_for([&] { return ckpts.latest_step().value_or(0) >= 6; }));
  kill(winner, SIGKILL);
  EXPECT_EQ(exit_status(winner), 1000 + SIGKILL) << testkit::read_file(t / (winner == a ? "a.log" : "b.log")) << "\nrefused:\n"
                                      << refused_log;
  for (int64_t s : ckpts.steps()) EXPECT_NO_THROW(kiln::load_checkpoint(ckpts.path_for(s))) << s;
  fs::remove_all(t);
}

TEST(TrainLock, CheckpointSavesNeverDeleteALiveProcesssTemporaryFile) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const fs::path t = testkit::fresh_dir("train-lock-tmp"), dir = t / "model";
  fs::create_directories(dir);
  const pid_t dead = testkit::dead_pid();
  // This test process is alive (and is not the kiln run); `dead` is gone.
  const fs::path live_tmp = dir / (".tmp-" + std::to_string(::getpid()) + "-ckpt-000000000099.kiln");
  const fs::path dead_tmp = dir / (".tmp-" + std::to_string(dead) + "-ckpt-000000000098.kiln");
  std::ofstream(live_tmp) << "being written";
  std::ofstream(dead_tmp) << "left behind";
  const Result r = run_kiln(kRun + "--steps 4 --save-checkpoints-steps 2 --model-dir " + dir.string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(testkit::read_file(live_tmp), "being written");
  EXPECT_FALSE(fs::exists(dead_tmp));
  EXPECT_EQ(kiln::CheckpointDir(dir.string(), 0).steps(), (std::vector<int64_t>{2, 4}));
  EXPECT_FALSE(fs::exists(dir / kiln::kModelDirLockFile)) << "a finished run removes its lock file (issue 61, item 12)";
  fs::remove_all(t);
}

}  // namespace
