// The model_dir lock through the Estimator API: train() takes it (and a second process
// cannot), evaluate() and predict() read a locked directory, the lock excludes within a
// process as between processes and is released when train() returns. The other process is this test binary again,
// filtered to a DISABLED_ test.
#include "kiln/train/model_dir_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kiln/train/checkpoint.h"
#include "kiln/train/estimator.h"
#include "kiln/models/models.h"
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

TEST(ModelDirLock, ExclusiveWithinAProcessAsBetweenProcessesAndReleasedWhenTrainReturns) {
  const fs::path t = testkit::fresh_dir("lock-shared"), dir = t / "model";
  const auto ds = testkit::blobs(128, 3);
  {
    const auto held = ModelDirLock::acquire(dir.string());
    EXPECT_TRUE(held->covers((t / "." / "model" / "").string())) << "the same directory, spelled otherwise";
    EXPECT_TRUE(contains(ModelDirLock::recorded_holder(dir.string()), "pid " + std::to_string(::getpid()) + " on host "));
    // A second holder in this process is refused, as another process is ...
    try {
      ModelDirLock::acquire((t / "." / "model" / "").string());
      ADD_FAILURE() << "a second lock of one directory in one process";
    } catch (const CheckpointError& e) {
      EXPECT_TRUE(contains(e.what(), "in use by another training run in this process")) << e.what();
    }
    EXPECT_THROW(blob_estimator(dir).train(testkit::training_input(ds, 32), 2), CheckpointError);
    const testkit::Result r = try_lock_in_another_process(dir);
    EXPECT_TRUE(contains(r.output, "refused: [model_dir] '" + dir.string() + "' is in use by another training run (pid " +
                                       std::to_string(::getpid())))
        << r.output;
    // ... unless the holder hands its lock to the Estimator (as `kiln train` does).
    RunConfig cfg;
    cfg.model_dir = dir.string();
    EstimatorOptions o = testkit::interp();
    o.model_dir_lock = held;
    Estimator own(classifier_model_fn(mlp_model({16}, 2, 7)), cfg, Params{{"optimizer", "sgd"}, {"learning_rate", 0.1}}, o);
    EXPECT_EQ(own.train(testkit::training_input(ds, 32), 2).global_step, 2);
  }
  EXPECT_TRUE(contains(try_lock_in_another_process(dir).output, "locked\n")) << "released with the last holder";
  EXPECT_EQ(blob_estimator(dir).train(testkit::training_input(ds, 32), 4).global_step, 4);
  EXPECT_TRUE(contains(try_lock_in_another_process(dir).output, "locked\n")) << "released when train() returned";
  fs::remove_all(t);
}

// Issue 61, item 12: deleting (or replacing) DIR/.kiln-lock while a run held it let a second
// run in, which locked the new file's inode. The lock is the directory's too now.
TEST(ModelDirLock, DeletingTheLockFileWhileARunHoldsItLetsNoSecondRunIn) {
  const fs::path t = testkit::fresh_dir("lock-deleted"), dir = t / "model";
  const auto ds = testkit::blobs(128, 3);
  const pid_t holder = hold_lock_in_another_process(dir, t / "ready");
  ASSERT_TRUE(fs::exists(dir / kModelDirLockFile));
  fs::remove(dir / kModelDirLockFile);
  testkit::Result r = try_lock_in_another_process(dir);
  EXPECT_TRUE(contains(r.output, "refused: [model_dir] '" + dir.string() + "' is in use by another training run ("))
      << "the lock file deleted:\n" << r.output;
  EXPECT_THROW(blob_estimator(dir).train(testkit::training_input(ds, 32), 2), CheckpointError);
  std::ofstream(dir / kModelDirLockFile) << "a new file under the lock file's name";
  r = try_lock_in_another_process(dir);
  EXPECT_TRUE(contains(r.output, "refused: [model_dir] '" + dir.string() + "' is in use by another training run ("))
      << "the lock file replaced:\n" << r.output;
  EXPECT_FALSE(CheckpointDir(dir.string(), 0).latest_step()) << "no refused run wrote a checkpoint";
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  EXPECT_TRUE(contains(try_lock_in_another_process(dir).output, "locked\n")) << "free once its holder is gone";
  fs::remove_all(t);
}

// Issue 61, item 12: a lock file left in a model directory must not look like a lock still
// held. A run that ends removes it; one left by a killed run says what it is.
TEST(ModelDirLock, AFinishedRunLeavesNoLockFileAndAKilledRunsSaysWhatItIs) {
  const fs::path t = testkit::fresh_dir("lock-leftover"), dir = t / "model";
  const auto ds = testkit::blobs(128, 3);
  { const auto held = ModelDirLock::acquire(dir.string()); }
  EXPECT_FALSE(fs::exists(dir / kModelDirLockFile)) << "released: no file left";
  EXPECT_EQ(blob_estimator(dir).train(testkit::training_input(ds, 32), 2).global_step, 2);
  EXPECT_FALSE(fs::exists(dir / kModelDirLockFile)) << "train() returned: no file left";

  const pid_t holder = hold_lock_in_another_process(dir, t / "ready");
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  const std::string left = testkit::read_file(dir / kModelDirLockFile);
  EXPECT_TRUE(contains(left, "kiln's lock of this model directory")) << left;
  EXPECT_TRUE(contains(left, "held only while that process runs")) << left;
  EXPECT_TRUE(contains(left, "harmless and may be deleted")) << left;
  EXPECT_TRUE(contains(ModelDirLock::recorded_holder(dir.string()), "pid " + std::to_string(holder) + " on host "))
      << left;
  EXPECT_EQ(blob_estimator(dir).train(testkit::training_input(ds, 32), 4).start_step, 2) << "the leftover is no lock";
  EXPECT_FALSE(fs::exists(dir / kModelDirLockFile));
  fs::remove_all(t);
}

// Two Estimators of one process on one model_dir: while one trains the other is refused;
// one after the other, each continues from the other's checkpoint (TensorFlow restores
// model_dir in every train()), so neither starts over nor interleaves its checkpoints.
TEST(ModelDirLock, TwoEstimatorsOfOneProcessTakeTurnsAndNeverStartOver) {
  const fs::path t = testkit::fresh_dir("lock-two"), dir = t / "model";
  const auto ds = testkit::blobs(128, 3);
  Estimator a = blob_estimator(dir), b = blob_estimator(dir);
  EXPECT_EQ(a.train(testkit::training_input(ds, 32), 5).global_step, 5);
  const TrainStats sb = b.train(testkit::training_input(ds, 32), 10);
  EXPECT_EQ(sb.start_step, 5);
  EXPECT_EQ(sb.global_step, 10);
  const TrainStats sa = a.train(testkit::training_input(ds, 32), 15);
  EXPECT_EQ(sa.start_step, 10) << "a continues from b's checkpoint, not from its own step 5";
  EXPECT_EQ(a.evaluate(testkit::eval_input(ds, 32)).global_step, 15);
  EXPECT_EQ(b.evaluate(testkit::eval_input(ds, 32)).global_step, 15) << "b evaluates the newest checkpoint";
  EXPECT_EQ(CheckpointDir(dir.string(), 0).steps(), (std::vector<int64_t>{5, 10, 15}));

  // At the same time: a hook of a's train() lets b try to train meanwhile.
  struct Meanwhile : Hook {
    Estimator* other;
    std::shared_ptr<const data::Dataset> ds;
    std::string refused;
    void after_run(RunContext&, const RunValues&) override {
      if (!refused.empty()) return;
      std::thread th([&] {
        try {
          other->train(testkit::training_input(ds, 32), 100);
          refused = "(trained)";
        } catch (const CheckpointError& e) {
          refused = e.what();
        }
      });
      th.join();
    }
  };
  auto hook = std::make_shared<Meanwhile>();
  hook->other = &b;
  hook->ds = ds;
  a.train(testkit::training_input(ds, 32), 17, {hook});
  EXPECT_TRUE(contains(hook->refused, "in use by another training run in this process")) << hook->refused;
  EXPECT_EQ(CheckpointDir(dir.string(), 0).latest_step(), 17);
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
