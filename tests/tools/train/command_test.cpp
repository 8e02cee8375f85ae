// Runs the built `kiln` binary as a user would and checks exit codes and output.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/run_kiln.h"

namespace {

using testkit::contains;
using testkit::Result;
using testkit::run_kiln;

TEST(TrainCommand, DryRunValidConfigurationsExitZero) {
  const char* valid[] = {
      "--accelerate-train-mode 'fast|step|0.9' --steps 10000",
      "--accelerate-train-mode 'fast1|loss' --final-loss 0.3 --precision-mode must_keep_origin_dtype",
      "--accelerate-train-mode 'fast|step' --precision-mode-v2 origin --iterations-per-loop 10",
      "--precision-mode allow_mix_precision_bf16",
      "--graph-compiler-cache-dir /tmp/kiln-cache --cache-size-cap 512M",
  };
  for (const char* args : valid) {
    const Result r = run_kiln(std::string("train --dry-run ") + args);
    EXPECT_EQ(r.status, 0) << args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "configuration is valid")) << r.output;
  }
  const Result r = run_kiln("train --dry-run --accelerate-train-mode 'fast|step|0.9' --steps 10000");
  EXPECT_TRUE(contains(r.output, "step 9000 of 10000")) << r.output;
}

TEST(TrainCommand, DryRunInvalidConfigurationsExitTwoAndNameTheOption) {
  const std::pair<const char*, const char*> invalid[] = {
      {"--accelerate-train-mode 'fast|step|0.95'", "[--accelerate-train-mode] ratio '0.95' is out of range 0.2..0.9"},
      {"--accelerate-train-mode 'fast|step' --precision-mode allow_mix_precision", "[--accelerate-train-mode]"},
      {"--precision-mode fp8", "[--precision-mode]"},
      {"--precision-mode force_fp32 --precision-mode-v2 origin", "precision_mode_v2"},
      {"--iterations-per-loop 0", "[--iterations-per-loop]"},
      {"--accelerate-train-mode 'turbo|step'", "[--accelerate-train-mode]"},
  };
  for (const auto& [args, message] : invalid) {
    const Result r = run_kiln(std::string("train --dry-run ") + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, message)) << args << "\n" << r.output;
  }
}

TEST(TrainCommand, UsageErrorsExitTwo) {
  for (const char* args : {"train --bogus", "train --steps abc", "train --batch-size 0", "train --learning-rate -1",
                           "train --optimizer rmsprop", "train --model resnet", "train --backend gpu", "frobnicate"}) {
    const Result r = run_kiln(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
  }
}

TEST(TrainCommand, MissingDataIsAClearErrorNamingThePackage) {
  const Result r = run_kiln("train --steps 1 --data /nonexistent/kiln-data");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "/nonexistent/kiln-data")) << r.output;
  EXPECT_TRUE(contains(r.output, "dataset-fashion-mnist")) << r.output;
}

TEST(TrainCommand, ShortRunWritesMetrics) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const auto path = std::filesystem::temp_directory_path() / ("kiln-metrics-" + std::to_string(getpid()) + ".jsonl");
  const Result r = run_kiln("train --steps 20 --batch-size 32 --log-every 10 --train-limit 2000 --metrics-out " +
                            path.string());
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(path);
  std::string line;
  std::vector<nlohmann::json> records;
  while (std::getline(in, line)) records.push_back(nlohmann::json::parse(line));
  std::filesystem::remove(path);
  // The Estimator's records (its second sink: the same as summaries.jsonl's), then the final one.
  std::vector<std::string> events;
  for (const auto& rec : records) {
    events.push_back(rec["event"].get<std::string>());
    EXPECT_TRUE(rec.contains("wall_time")) << rec.dump();
  }
  EXPECT_EQ(events, (std::vector<std::string>{"start", "progress", "progress", "end", "eval", "final"}));
  EXPECT_EQ(records[1]["step"], 10);
  EXPECT_EQ(records[2]["step"], 20);
  EXPECT_EQ(records[4]["step"], 20);
  EXPECT_EQ(records[4]["metrics"]["accuracy"], records.back()["test_accuracy"]);
  const auto& f = records.back();
  EXPECT_EQ(f["event"], "final");
  EXPECT_EQ(f["steps"], 20);
  for (const char* key : {"train_seconds", "steps_per_second", "final_loss", "test_accuracy"})
    EXPECT_TRUE(f.contains(key)) << key;
  EXPECT_GT(f["test_accuracy"].get<double>(), 0.3);
}

// --metrics-out is a second sink of the Estimator's records: with the same progress
// interval it holds what summaries.jsonl holds, record for record (wall times included),
// and then the command's final record.
TEST(TrainCommand, MetricsOutHoldsTheSummaryFilesRecords) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const auto dir = std::filesystem::temp_directory_path() / ("kiln-sinks-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto metrics = dir / "m.jsonl";
  const Result r = run_kiln("train --backend interp --steps 12 --batch-size 32 --train-limit 2000 --test-limit 300 "
                            "--log-every 4 --save-summary-steps 4 --eval-every 6 --accelerate-train-mode 'fast1|step|0.5' "
                            "--model-dir " + (dir / "model").string() + " --metrics-out " + metrics.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const auto read = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    std::string line;
    std::vector<nlohmann::json> out;
    while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
    return out;
  };
  std::vector<nlohmann::json> summaries = read(dir / "model" / "summaries.jsonl"), sink = read(metrics);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(sink.empty());
  EXPECT_EQ(sink.back()["event"], "final");
  sink.pop_back();
  EXPECT_EQ(sink, summaries);
  std::vector<std::string> events;
  for (const auto& rec : sink) events.push_back(rec["event"].get<std::string>());
  EXPECT_EQ(events, (std::vector<std::string>{"start", "progress", "eval", "precision_switch", "progress", "progress",
                                              "end", "eval"}))
      << nlohmann::json(sink).dump(1);
}

// Issue 19: --log-step-count-steps was accepted and ignored. It sets the plain progress
// lines; --log-every keeps setting the metrics records (and the lines when it is not given).
TEST(TrainCommand, LogStepCountStepsSetsThePlainProgressLines) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const std::string base = "train --backend interp --steps 6 --batch-size 32 --train-limit 2000 --test-limit 500 ";
  const Result every2 = run_kiln(base + "--log-every 0 --log-step-count-steps 2");
  ASSERT_EQ(every2.status, 0) << every2.output;
  for (const char* line : {"step 2/6  loss", "step 4/6  loss", "step 6/6  loss"})
    EXPECT_TRUE(contains(every2.output, line)) << line << "\n" << every2.output;
  EXPECT_FALSE(contains(every2.output, "step 3/6  loss")) << every2.output;

  const auto path = std::filesystem::temp_directory_path() / ("kiln-logsteps-" + std::to_string(getpid()) + ".jsonl");
  const Result off = run_kiln(base + "--log-every 3 --log-step-count-steps 0 --metrics-out " + path.string());
  ASSERT_EQ(off.status, 0) << off.output;
  EXPECT_FALSE(contains(off.output, "/6  loss")) << off.output;
  std::ifstream in(path);
  std::string line;
  int progress = 0;
  while (std::getline(in, line)) progress += nlohmann::json::parse(line)["event"] == "progress";
  std::filesystem::remove(path);
  EXPECT_EQ(progress, 2);  // steps 3 and 6

  const Result by_log_every = run_kiln(base + "--log-every 3");
  ASSERT_EQ(by_log_every.status, 0) << by_log_every.output;
  EXPECT_TRUE(contains(by_log_every.output, "step 3/6  loss")) << by_log_every.output;
  EXPECT_FALSE(contains(by_log_every.output, "step 2/6  loss")) << by_log_every.output;
}

// A run whose loss turns NaN stops at once with exit 1 (not 0, not 2: the configuration
// was valid), on both backends, naming the step, and writes no checkpoint for it.
TEST(TrainCommand, ANanLossStopsTheRunWithExitOne) {
  if (!testkit::have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  for (const std::string backend : {"interp", "cpu"}) {
    const auto dir = std::filesystem::temp_directory_path() / ("kiln-nan-" + backend + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    const Result r = run_kiln("train --backend " + backend +
                              " --batch-size 32 --train-limit 512 --test-limit 100 --steps 50 --log-every 0"
                              " --optimizer sgd --learning-rate 1e30 --save-checkpoints-steps 1 --model-dir " +
                              dir.string());
    EXPECT_EQ(r.status, 1) << backend << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "[nan_guard] loss is nan at step ")) << backend << ": " << r.output;
    EXPECT_FALSE(contains(r.output, "done:")) << backend << ": " << r.output;
    std::filesystem::remove_all(dir);
  }
}

// --threads sets the kernels' thread count: the banner and the final record report it,
// and the default is one per core this process may use.
TEST(TrainCommand, ThreadsOptionSetsAndReportsTheThreadCount) {
  if (!testkit::have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const auto metrics = std::filesystem::temp_directory_path() / ("kiln-threads-" + std::to_string(::getpid()));
  for (const int threads : {1, 3, 0}) {
    const Result r = run_kiln("train --backend interp --batch-size 32 --train-limit 256 --test-limit 100 --steps 2"
                              " --log-every 0 --threads " + std::to_string(threads) + " --metrics-out " + metrics.string());
    ASSERT_EQ(r.status, 0) << r.output;
    std::ifstream in(metrics);
    std::string line, last;
    while (std::getline(in, line)) last = line;
    cpu_set_t set;
    ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    const char* omp = std::getenv("OMP_NUM_THREADS");
    const int fallback = omp && *omp ? std::atoi(omp) : CPU_COUNT(&set);
    const int got = nlohmann::json::parse(last)["threads"];
    EXPECT_EQ(got, threads > 0 ? threads : fallback) << "--threads " << threads;
    EXPECT_TRUE(contains(r.output, ", " + std::to_string(got) + " threads\n")) << r.output;
  }
  std::filesystem::remove(metrics);
}

// The final record says which OpenMP wait setting the run had: the user's, or the spin
// count kiln chose at start (10000 on quiet CPUs, 1000 beside other work).
TEST(TrainCommand, FinalRecordReportsTheOpenMpWaitSetting) {
  if (!testkit::have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const auto metrics = std::filesystem::temp_directory_path() / ("kiln-wait-" + std::to_string(::getpid()));
  auto setting = [&](const std::string& env) {
    const Result r = testkit::run_command("env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY -u KILN_KEEP_OPENMP_WAIT " + env + " " +
                                 KILN_BINARY + " train --backend interp --batch-size 32 --train-limit 256"
                                 " --test-limit 100 --steps 2 --log-every 0 --metrics-out " + metrics.string() + " 2>&1");
    EXPECT_EQ(r.status, 0) << r.output;
    std::ifstream in(metrics);
    std::string line, last;
    while (std::getline(in, line)) last = line;
    return nlohmann::json::parse(last).value("openmp_wait", std::string("missing"));
  };
  EXPECT_EQ(setting("GOMP_SPINCOUNT=77"), "GOMP_SPINCOUNT=77");
  EXPECT_EQ(setting("OMP_WAIT_POLICY=passive"), "OMP_WAIT_POLICY=passive");
  const std::string chosen = setting("");
  EXPECT_TRUE(chosen == "GOMP_SPINCOUNT=10000" || chosen == "GOMP_SPINCOUNT=1000") << chosen;
  std::filesystem::remove(metrics);
}

}  // namespace
