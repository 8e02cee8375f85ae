// The model_dir lock through the Estimator API: train() takes it (and a second process
// cannot), evaluate() and predict() read a locked directory, the lock is shared within a
// process and released when train() returns. The other process is this test binary again,
// filtered to a DISABLED_ test.
#include "kiln/model_dir_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kiln/checkpoint.h"
#include "kiln/estimator.h"
#include "kiln/models.h"
#include "support/processes.h"
#include "support/run_kiln.h"
#include "support/temp_files.h"
#include "support/train_inputs.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testkit::contains;

Estimator blob_estimator(const fs::path& model_dir) {
  RunConfig cfg;
  cfg.model_dir = model_dir.string();
  return Estimator(classifier_model_fn(mlp_model({16}, 2, 7)), cfg, Params{{"optimizer", "sgd"}, {"learning_rate", 0.1}},
                   testkit::interp());
}

std::string self_exe() { return fs::read_symlink("/proc/self/exe").string(); }

// Runs the child once: it tries the lock and says what happened.
testkit::Result try_lock_in_another_process(const fs::path& dir) {
  return testkit::run_command("KILN_TEST_LOCK_DIR='" + dir.string() + "' '" + self_exe() +
                              "' --gtest_also_run_disabled_tests --gtest_filter='ModelDirLockChild.DISABLED_Lock' 2>&1");
}

// Starts a child that takes the lock and holds it until killed; returns once it holds it.
pid_t hold_lock_in_another_process(const fs::path& dir, const fs::path& ready) {
  const pid_t pid = fork();
  if (pid == 0) {
    ::setenv("KILN_TEST_LOCK_DIR", dir.c_str(), 1);
    ::setenv("KILN_TEST_LOCK_READY", ready.c_str(), 1);
    const std::string exe = self_exe();
    execl(exe.c_str(), exe.c_str(), "--gtest_also_run_disabled_tests", "--gtest_filter=ModelDirLockChild.DISABLED_Lock",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  testkit::wait_for([&] { return fs::exists(ready); });
  return pid;
}

TEST(ModelDirLockChild, DISABLED_Lock) {
  const char* dir = std::getenv("KILN_TEST_LOCK_DIR");
  ASSERT_NE(dir, nullptr);
  try {
    const auto lock = ModelDirLock::acquire(dir);
    std::printf("locked\n");
    std::fflush(stdout);
    if (const char* ready = std::getenv("KILN_TEST_LOCK_READY")) {
      std::ofstream(ready) << "locked";
      std::this_thread::sleep_for(std::chrono::seconds(120));  // until killed
    }
  } catch (const CheckpointError& e) {
    std::printf("refused: %s\n", e.what());
  }
}

TEST(ModelDirLock, TrainRefusesADirectoryAnotherProcessTrainsInButEvaluateAndPredictRead) {
  const fs::path t = testkit::fresh_dir("lock-estimator"), dir = t / "model";
  const auto ds = testkit::blobs(128, 3);
  ASSERT_EQ(blob_estimator(dir).train(testkit::training_input(ds, 32), 3).global_step, 3);

  const pid_t holder = hold_lock_in_another_process(dir, t / "ready");
  ASSERT_TRUE(fs::exists(t / "ready"));
  Estimator est = blob_estimator(dir);
  try {
    est.train(testkit::training_input(ds, 32), 6);
    ADD_FAILURE() << "train() must refuse a directory another process holds";
  } catch (const CheckpointError& e) {
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "[model_dir] '" + dir.string() + "' is in use by another training run (pid " +
                                std::to_string(holder) + " on host "))
        << m;
  }
  EXPECT_EQ(CheckpointDir(dir.string(), 0).steps(), (std::vector<int64_t>{3})) << "nothing written";
  // Reading needs no lock.
  const Evaluation ev = est.evaluate(testkit::eval_input(ds, 32));
  EXPECT_EQ(ev.global_step, 3);
  EXPECT_EQ(ev.examples, 128);
  EXPECT_EQ(est.predict(testkit::eval_input(ds, 32)).at("classes").shape(), (Shape{128}));

  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  Estimator again = blob_estimator(dir);
  EXPECT_EQ(again.train(testkit::training_input(ds, 32), 6).start_step, 3) << "the lock died with its holder";
  fs::remove_all(t);
}

TEST(ModelDirLock, SharedWithinAProcessAndReleasedWhenTrainReturns) {
  const fs::path t = testkit::fresh_dir("lock-shared"), dir = t / "model";
  const auto ds = testkit::blobs(128, 3);
  {
    const auto held = ModelDirLock::acquire(dir.string());
    EXPECT_EQ(ModelDirLock::acquire((t / "." / "model" / "").string()), held) << "the same directory, spelled otherwise";
    EXPECT_TRUE(contains(ModelDirLock::recorded_holder(dir.string()), "pid " + std::to_string(::getpid()) + " on host "));
    // This process may train in it (as `kiln train` does while it holds the lock) ...
    EXPECT_EQ(blob_estimator(dir).train(testkit::training_input(ds, 32), 2).global_step, 2);
    // ... another may not.
    const testkit::Result r = try_lock_in_another_process(dir);
    EXPECT_TRUE(contains(r.output, "refused: [model_dir] '" + dir.string() + "' is in use by another training run (pid " +
                                       std::to_string(::getpid())))
        << r.output;
  }
  EXPECT_TRUE(contains(try_lock_in_another_process(dir).output, "locked\n")) << "released with the last holder";
  EXPECT_EQ(blob_estimator(dir).train(testkit::training_input(ds, 32), 4).global_step, 4);
  EXPECT_TRUE(contains(try_lock_in_another_process(dir).output, "locked\n")) << "released when train() returned";
  fs::remove_all(t);
}

// A save removes temporary files of processes that are gone, never those of a live one.
TEST(ModelDirLock, ASaveKeepsTheTemporaryFilesOfLiveProcesses) {
  const fs::path t = testkit::fresh_dir("lock-tmpfiles");
  fs::create_directories(t);
  const pid_t dead = testkit::dead_pid();
  const fs::path live_tmp = t / (".tmp-" + std::to_string(::getppid()) + "-ckpt-000000000100.kiln");
  const fs::path dead_tmp = t / (".tmp-" + std::to_string(dead) + "-ckpt-000000000100.kiln");
  std::ofstream(live_tmp) << "half written by a live process";
  std::ofstream(dead_tmp) << "left by a killed process";
  CheckpointDir unlocked(t.string(), 0);
  Checkpoint c;
  c.step = 1;
  unlocked.save(c);
  EXPECT_TRUE(fs::exists(dead_tmp)) << "without the lock nothing of others' is removed";
  CheckpointDir locked(t.string(), 0);
  locked.prepare();
  c.step = 2;
  locked.save(c);
  EXPECT_FALSE(fs::exists(dead_tmp));
  EXPECT_EQ(testkit::read_file(live_tmp), "half written by a live process");
  fs::remove_all(t);
}

}  // namespace
}  // namespace kiln
