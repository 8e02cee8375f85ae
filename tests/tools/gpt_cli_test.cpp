// `kiln train --model gpt` and `kiln sample` as a user runs them, on a tiny text and a
// tiny model (the interpreter: no compile in the test's time).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "support/run_kiln.h"
#include "support/temp_files.h"

namespace {
namespace fs = std::filesystem;
using testkit::contains;
using testkit::Result;
using testkit::run_kiln;

nlohmann::json final_record(const fs::path& metrics) {
  std::ifstream in(metrics);
  std::string line, last;
  while (std::getline(in, line)) last = line;
  return last.empty() ? nlohmann::json() : nlohmann::json::parse(last);
}

class GptCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testkit::fresh_dir("gpt-cli");
    fs::create_directories(dir_);
    std::ofstream text(dir_ / "text.txt", std::ios::binary);
    for (int i = 0; i < 60; ++i) text << "the cat sat on the mat.\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string train_args(int steps, const std::string& model_dir, const std::string& metrics) const {
    return "train --model gpt --backend interp --data " + (dir_ / "text.txt").string() +
           " --layers 1 --heads 2 --width 16 --context 8 --batch-size 8 --optimizer adam --learning-rate 0.01"
           // one schedule for every run (the cosine decay ends at --steps unless told), so a
           // resumed run can end where a straight one does
           " --decay-steps 30 --log-every 0 --eval-every 10 --steps " + std::to_string(steps) +
           (model_dir.empty() ? "" : " --model-dir " + model_dir) + " --metrics-out " + metrics;
  }
  fs::path dir_;
};

TEST_F(GptCli, TrainsEvaluatesOnTheValidationSplitResumesExactlyAndSamples) {
  const std::string model = (dir_ / "model").string();
  const Result r = run_kiln(train_args(20, model, (dir_ / "a.jsonl").string()));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "vocabulary 12 bytes")) << r.output;
  EXPECT_TRUE(contains(r.output, "eval at step 10: validation loss")) << r.output;
  const nlohmann::json a = final_record(dir_ / "a.jsonl");
  EXPECT_EQ(a["model"], "gpt");
  EXPECT_EQ(a["gpt"]["eval_split"], "validation");
  EXPECT_LT(a["test_loss"].get<double>(), std::log(12.0));  // learnt something in 20 steps

  // Resuming to 30 steps ends where a straight 30-step run does.
  const Result resumed = run_kiln(train_args(30, model, (dir_ / "b.jsonl").string()));
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_TRUE(contains(resumed.output, "resumed from checkpoint at step 20")) << resumed.output;
  const Result straight = run_kiln(train_args(30, "", (dir_ / "c.jsonl").string()));
  ASSERT_EQ(straight.status, 0) << straight.output;
  EXPECT_EQ(final_record(dir_ / "b.jsonl")["final_loss"], final_record(dir_ / "c.jsonl")["final_loss"]);
  EXPECT_EQ(final_record(dir_ / "b.jsonl")["test_loss"], final_record(dir_ / "c.jsonl")["test_loss"]);

  // Sampling needs only the model directory; the same seed gives the same text.
  const std::string sample = "sample --backend interp --model-dir " + model + " --prompt 'the ' --length 30 --seed 3";
  const Result s1 = run_kiln(sample), s2 = run_kiln(sample);
  ASSERT_EQ(s1.status, 0) << s1.output;
  EXPECT_EQ(s1.output, s2.output);
  EXPECT_EQ(s1.output.rfind("the ", 0), 0u) << s1.output;
  EXPECT_EQ(s1.output.size(), 4u + 30 + 1) << s1.output;
  const Result bad_prompt = run_kiln("sample --backend interp --model-dir " + model + " --prompt 'QZ'");
  EXPECT_EQ(bad_prompt.status, 2) << bad_prompt.output;
  EXPECT_TRUE(contains(bad_prompt.output, "not in the model's vocabulary")) << bad_prompt.output;
}

// The compiled backend in mixed bfloat16, through accelerate_train_mode's switch (its two
// executables share the float32 weights), then float32 to the end.
TEST_F(GptCli, Fast1SwitchesToTheOriginalPrecisionOnTheCompiledBackend) {
  std::string args = train_args(20, "", (dir_ / "f.jsonl").string());
  args.replace(args.find("--backend interp"), 16, "--backend cpu --accelerate-train-mode 'fast1|step|0.5'");
  const Result r = run_kiln(args);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "precision switch: mixed_bfloat16 -> original at step 10 (requested 10, step)"))
      << r.output;
  const nlohmann::json f = final_record(dir_ / "f.jsonl");
  EXPECT_EQ(f["backend"], "cpu");
  EXPECT_LT(f["test_loss"].get<double>(), std::log(12.0));
}

TEST_F(GptCli, BadInputsExitTwoWithTheReason) {
  std::ofstream(dir_ / "latin1.txt", std::ios::binary) << "caf\xe9\n";
  const std::pair<std::string, std::string> cases[] = {
      {"train --dry-run --model gpt --data " + (dir_ / "latin1.txt").string(), "is not UTF-8 text: byte 3 (0xe9)"},
      {"train --dry-run --model gpt --heads 3 --data " + (dir_ / "text.txt").string(), "not a multiple of 3 heads"},
      {"train --dry-run --model gpt --context 5000 --batch-size 1 --heads 1 --layers 1 --data " + (dir_ / "text.txt").string(),
       "fewer than one window"},
      {"train --dry-run --model gpt --context 5000 --data " + (dir_ / "text.txt").string(), "[memory] training gpt"},
      {"train --dry-run --model gpt --data " + (dir_ / "missing").string(), "does not exist"},
      {"train --dry-run --model mlp --layers 2", "is an option of --model gpt"},
      {"sample --model-dir " + (dir_ / "none").string(), "is not a directory"},
      {"sample --model-dir " + dir_.string(), "holds no checkpoint"},
      {"sample --model-dir " + dir_.string() + " --temperature 0", "--temperature"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run_kiln(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, message)) << args << "\n" << r.output;
  }
}

TEST(GptCliFortunes, DryRunReadsTheFortunesPackageByDefault) {
  if (!fs::exists("/usr/share/games/fortunes")) GTEST_SKIP() << "the 'fortunes' package is not installed";
  const Result r = run_kiln("train --dry-run --model gpt");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "model gpt (4 layers, 4 heads, width 128, context 64)")) << r.output;
}

// The default model (4 layers, 4 heads, width 128, context 64, batch 32) on the default
// text: the interpreter and the compiled step give the same loss at every step and the same
// validation loss (seen bit-equal; 1e-6 leaves room for a reassociated double sum).
TEST(GptCliFortunes, TheInterpreterAndTheCompiledStepAgreeAtTheDefaultSize) {
  if (!fs::exists("/usr/share/games/fortunes")) GTEST_SKIP() << "the 'fortunes' package is not installed";
  const fs::path dir = testkit::fresh_dir("gpt-default");
  fs::create_directories(dir);
  std::map<std::string, std::map<int64_t, double>> losses;
  std::map<std::string, double> validation;
  for (const std::string backend : {"cpu", "interp"}) {
    const fs::path metrics = dir / (backend + ".jsonl");
    const Result r = run_kiln("train --model gpt --steps 3 --seed 0 --log-every 1 --test-limit 8 --backend " + backend +
                              " --graph-compiler-cache-dir " + (dir / "cache").string() + " --metrics-out " +
                              metrics.string());
    ASSERT_EQ(r.status, 0) << r.output;
    std::ifstream in(metrics);
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line);
      if (j.value("event", "progress") == "progress" && j.contains("loss"))
        losses[backend][j["step"].get<int64_t>()] = j["loss"].get<double>();
      if (j.value("event", "") == "final") validation[backend] = j["test_loss"].get<double>();
    }
  }
  ASSERT_EQ(losses["cpu"].size(), 3u);
  for (const auto& [step, loss] : losses["cpu"])
    EXPECT_NEAR(loss, losses["interp"].at(step), 1e-6 * std::abs(loss)) << "step " << step;
  EXPECT_NEAR(validation["cpu"], validation["interp"], 1e-6 * validation["cpu"]);
  fs::remove_all(dir);
}

}  // namespace
