// `kiln train` with --model-dir as a user meets it: kill -9 and resume, Ctrl-C, and the
// bad inputs that must fail cleanly (exit 2) without overwriting anything.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "kiln/train/checkpoint.h"
#include "support/run_kiln.h"

namespace {
namespace fs = std::filesystem;

using testkit::have_data;
using testkit::contains;
using testkit::Result;
using testkit::run_kiln;

pid_t spawn_kiln(const std::string& args, const fs::path& log) { return testkit::spawn_kiln(args, log.string()); }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Waits (up to two minutes) until `log` shows `text` or the process ends (its status in `st`).
void wait_for_log(pid_t pid, const fs::path& log, const std::string& text, int& st) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!contains(slurp(log), text) && std::chrono::steady_clock::now() < deadline && waitpid(pid, &st, WNOHANG) == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("kiln-cli-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

nlohmann::json final_record(const fs::path& metrics) {
  std::ifstream in(metrics);
  std::string line, last;
  while (std::getline(in, line)) last = line;
  return nlohmann::json::parse(last);
}

const std::string kBase = "train --backend interp --batch-size 32 --train-limit 2000 --test-limit 1000 ";
const std::string kSmall = kBase + "--log-every 0 ";

TEST(TrainResume, KillNineAtAnyMomentThenResumeReachesTheSameResult) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  TempDir t;
  const fs::path model_dir = t.path / "model";
  // 120 steps: far more than the two kills need, so the run never ends before one.
  const std::string args = kSmall + "--steps 120 --save-checkpoints-steps 5 --keep-checkpoint-max 3 --model-dir " +
                           model_dir.string();
  kiln::CheckpointDir dir(model_dir.string(), 0);
  int64_t last_before = -1;
  for (int round = 0; round < 2; ++round) {
    const pid_t pid = spawn_kiln(args, t.path / "log.txt");
    // Let it get somewhere (past its previous checkpoint), then kill it at an odd moment.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      const auto latest = dir.latest_step();
      if (latest && *latest > last_before) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(7 + 13 * round));
    kill(pid, SIGKILL);
    int st = 0;
    waitpid(pid, &st, 0);
    // Every checkpoint present is complete and loads.
    for (int64_t s : dir.steps()) EXPECT_NO_THROW(kiln::load_checkpoint(dir.path_for(s))) << s;
    ASSERT_TRUE(dir.latest_step().has_value()) << slurp(t.path / "log.txt");
    last_before = *dir.latest_step();
    ASSERT_LT(last_before, 120) << "the run finished before the kill: the test needs more steps";
  }
  const Result r = run_kiln(args + " --metrics-out " + (t.path / "resumed.jsonl").string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "resumed from checkpoint at step " + std::to_string(last_before))) << r.output;
  const auto resumed = final_record(t.path / "resumed.jsonl");
  EXPECT_EQ(resumed["steps"], 120);

  // An uninterrupted run ends in exactly the same state (same batches, same arithmetic).
  const Result u = run_kiln(kSmall + "--steps 120 --metrics-out " + (t.path / "straight.jsonl").string());
  ASSERT_EQ(u.status, 0) << u.output;
  const auto straight = final_record(t.path / "straight.jsonl");
  EXPECT_EQ(resumed["final_loss"], straight["final_loss"]);
  EXPECT_EQ(resumed["test_accuracy"], straight["test_accuracy"]);
}

TEST(TrainResume, CtrlCStopsAfterTheCurrentStepAndWritesACheckpoint) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  TempDir t;
  const fs::path model_dir = t.path / "model";
  const pid_t pid = spawn_kiln(kBase + "--steps 100000 --save-checkpoints-steps 0 --log-every 1 --model-dir " +
                                   model_dir.string(),
                               t.path / "log.txt");
  int st = 0;
  wait_for_log(pid, t.path / "log.txt", "step 5/", st);
  kill(pid, SIGINT);
  waitpid(pid, &st, 0);
  const std::string log = slurp(t.path / "log.txt");
  ASSERT_TRUE(WIFEXITED(st)) << log;
  EXPECT_EQ(WEXITSTATUS(st), 130) << log;
  EXPECT_TRUE(contains(log, "interrupted at step ")) << log;
  const auto latest = kiln::CheckpointDir(model_dir.string(), 0).latest_step();
  ASSERT_TRUE(latest.has_value()) << log;
  EXPECT_TRUE(contains(log, "interrupted at step " + std::to_string(*latest) + ";")) << log;
}

// The second Ctrl-C does not wait for the step: the process dies of SIGINT, as any program
// would. (Slow CNN steps on the interpreter leave the second signal well inside a step.)
TEST(TrainResume, ASecondCtrlCEndsTheProcessBySigint) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  TempDir t;
  const pid_t pid = spawn_kiln("train --model cnn --backend interp --batch-size 16 --train-limit 2000 "
                               "--test-limit 1000 --steps 1000 --log-every 1 --model-dir " +
                                   (t.path / "model").string(),
                               t.path / "log.txt");
  int st = 0;
  wait_for_log(pid, t.path / "log.txt", "step 1/", st);
  kill(pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  kill(pid, SIGINT);
  waitpid(pid, &st, 0);
  const std::string log = slurp(t.path / "log.txt");
  ASSERT_TRUE(WIFSIGNALED(st)) << "exit status " << (WIFEXITED(st) ? WEXITSTATUS(st) : -1) << "\n" << log;
  EXPECT_EQ(WTERMSIG(st), SIGINT) << log;
  EXPECT_FALSE(contains(log, "interrupted at step")) << log;
}

TEST(TrainResume, ACorruptCheckpointIsExitTwoAndNothingIsOverwritten) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  TempDir t;
  const std::string dir = (t.path / "model").string();
  ASSERT_EQ(run_kiln(kSmall + "--steps 3 --model-dir " + dir).status, 0);
  const std::string path = kiln::CheckpointDir(dir, 0).path_for(3) + ".data-00000-of-00001";
  std::string bytes = slurp(path);
  bytes[bytes.size() / 2] ^= 0x01;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  const Result r = run_kiln(kSmall + "--steps 6 --model-dir " + dir + " --metrics-out " + (t.path / "m.jsonl").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "CRC-32C does not match")) << r.output;
  EXPECT_EQ(slurp(path), bytes);
  EXPECT_EQ(kiln::CheckpointDir(dir, 0).steps(), (std::vector<int64_t>{3}));
  EXPECT_FALSE(fs::exists(t.path / "m.jsonl"));
}

TEST(TrainResume, ACheckpointOfAnotherModelIsExitTwoListingTheMismatches) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  TempDir t;
  const std::string dir = (t.path / "model").string();
  ASSERT_EQ(run_kiln(kSmall + "--steps 2 --model-dir " + dir).status, 0);
  const Result r = run_kiln(kSmall + "--steps 4 --model cnn --model-dir " + dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "'conv0/filter' f32[32,1,3,3] is in the model but not in the checkpoint")) << r.output;
  EXPECT_TRUE(contains(r.output, "'dense1/kernel' f32[1024,1024] is in the checkpoint but not in the model")) << r.output;
  EXPECT_EQ(kiln::CheckpointDir(dir, 0).steps(), (std::vector<int64_t>{2}));
}

TEST(TrainResume, BadInputsExitTwoWithClearMessages) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const std::pair<std::string, std::string> cases[] = {
      {"--steps 5 --model-dir /proc/kiln-cannot-create", "[--model-dir]"},
      {"--steps 0", "--steps"},
      {"--steps -3", "--steps"},
      {"--steps 5 --train-limit 100 --batch-size 256", "[--batch-size] '256' exceeds the 100 training examples"},
      {"--steps 5 --data /nonexistent/kiln-data", "dataset-fashion-mnist"},
      {"--steps 5 --accelerate-train-mode 'fast2|step'", "[--accelerate-train-mode] unknown"},
      {"--steps 5 --accelerate-train-mode 'fast1|loss'", "[--final-loss]"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run_kiln("train --backend interp " + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, message)) << args << "\n" << r.output;
  }
}

TEST(TrainResume, QuietEvalEveryAndMaxStepsCountingTheGlobalStep) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  TempDir t;
  const std::string dir = (t.path / "model").string();
  const fs::path m = t.path / "m.jsonl";
  const Result r = run_kiln(kSmall + "--steps 6 --eval-every 3 --quiet --model-dir " + dir + " --metrics-out " + m.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "kiln train:")) << r.output;  // quiet: only the summary
  EXPECT_TRUE(contains(r.output, "done: 6 steps")) << r.output;
  std::ifstream in(m);
  std::string line;
  std::vector<nlohmann::json> recs;
  while (std::getline(in, line)) recs.push_back(nlohmann::json::parse(line));
  // --log-every 0: no progress records; the --eval-every evaluation, the final one, the final record.
  std::vector<std::string> events;
  for (const auto& rec : recs) events.push_back(rec["event"].get<std::string>());
  ASSERT_EQ(events, (std::vector<std::string>{"start", "eval", "end", "eval", "final"}));
  EXPECT_EQ(recs[1]["step"], 3);
  EXPECT_EQ(recs[3]["step"], 6);
  for (const char* key : {"compile_seconds", "eval_seconds", "test_accuracy", "examples_per_second"})
    EXPECT_TRUE(recs[4].contains(key)) << key;
  // Asking for the same total again trains nothing more.
  const Result again = run_kiln(kSmall + "--steps 6 --model-dir " + dir);
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "resumed from checkpoint at step 6") ||
              contains(again.output, "already reached max_steps 6"))
      << again.output;
  EXPECT_TRUE(contains(again.output, "done: 6 steps")) << again.output;
}

// Issue 19: --eval-every used to cut the run into one train() call per evaluation, and each
// call's end wrote a checkpoint. Evaluations now run inside the one call.
TEST(TrainResume, EvalEveryWritesNoExtraCheckpoints) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  TempDir t;
  const std::string dir = (t.path / "model").string();
  const fs::path m = t.path / "m.jsonl";
  const Result r = run_kiln(kSmall + "--steps 6 --eval-every 2 --save-checkpoints-steps 0 --model-dir " + dir +
                            " --metrics-out " + m.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(kiln::CheckpointDir(dir, 0).steps(), (std::vector<int64_t>{6})) << r.output;
  EXPECT_TRUE(contains(r.output, "eval at step 2:")) << r.output;
  EXPECT_TRUE(contains(r.output, "eval at step 4:")) << r.output;
  EXPECT_TRUE(contains(r.output, "done: 6 steps")) << r.output;
  std::ifstream in(m);
  std::string line;
  std::vector<int64_t> eval_steps;
  while (std::getline(in, line)) {
    const auto rec = nlohmann::json::parse(line);
    if (rec["event"] == "eval") eval_steps.push_back(rec["step"].get<int64_t>());
  }
  EXPECT_EQ(eval_steps, (std::vector<int64_t>{2, 4, 6}));  // the --eval-every ones and the final one
  const auto fin = final_record(m);
  EXPECT_EQ(fin["steps"], 6);
  EXPECT_EQ(fin["steps_this_run"], 6);
  EXPECT_GT(fin["eval_seconds"].get<double>(), 0.0);
}

TEST(TrainResume, ATerminalGetsOneLiveProgressLine) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  if (!fs::exists("/usr/bin/script")) GTEST_SKIP() << "script(1) is not installed";
  // script(1) runs kiln on a pseudo-terminal, so stdout is a TTY.
  const std::string cmd = std::string(KILN_BINARY) + " " + kSmall + "--steps 4";
  const Result r = testkit::run_command("/usr/bin/script -qfec '" + cmd + "' /dev/null");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "\r\033[Kstep ")) << r.output;
  EXPECT_TRUE(contains(r.output, "step 4/4")) << r.output;
  EXPECT_TRUE(contains(r.output, "ETA")) << r.output;
  EXPECT_TRUE(contains(r.output, "phase original")) << r.output;
  EXPECT_TRUE(contains(r.output, "done: 4 steps")) << r.output;
}

}  // namespace
