// `kiln train --backend cpu` and `--backend interp` with the same seed follow the same
// loss curve and final weights, bit for bit: the compiled step computes what the
// interpreter computes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/train/checkpoint.h"
#include "support/run_kiln.h"

namespace {

struct TrainedRun {
  std::vector<nlohmann::json> records;
  kiln::Variables variables;  // the final checkpoint's
};

TrainedRun train(const std::string& backend, const std::string& model, int steps) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kiln-parity-" + backend + "-" + model + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto path = dir / "metrics.jsonl";
  const std::string cmd = std::string(KILN_BINARY) + " train --quiet --backend " + backend + " --model " + model +
                          " --steps " + std::to_string(steps) +
                          " --batch-size 64 --train-limit 4096 --test-limit 1000 --log-every 1 --seed 3 --metrics-out " +
                          path.string() + " --model-dir " + (dir / "model").string() + " 2>&1";
  const testkit::Result r = testkit::run_command(cmd);
  EXPECT_EQ(r.status, 0) << r.output;
  TrainedRun run;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) run.records.push_back(nlohmann::json::parse(line));
  const kiln::CheckpointDir ckpts((dir / "model").string(), 0);
  if (const auto latest = ckpts.latest_step()) run.variables = kiln::load_checkpoint(ckpts.path_for(*latest)).variables;
  std::filesystem::remove_all(dir);
  return run;
}

std::vector<double> progress_losses(const std::vector<nlohmann::json>& records) {
  std::vector<double> out;
  for (const auto& r : records)
    if (r.value("event", "") == "progress") out.push_back(r["loss"].get<double>());
  return out;
}

const nlohmann::json& final_record(const std::vector<nlohmann::json>& records) {
  for (const auto& r : records)
    if (r.value("event", "") == "final") return r;
  static const nlohmann::json none;
  ADD_FAILURE() << "no final record";
  return none;
}

TEST(BackendParity, MlpLossCurveAndFinalWeightsMatchBitForBitFor100Steps) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const TrainedRun cpu = train("cpu", "mlp", 100), interp = train("interp", "mlp", 100);
  const auto a = progress_losses(cpu.records), b = progress_losses(interp.records);
  ASSERT_EQ(a.size(), 100u);
  ASSERT_EQ(a.size(), b.size());
  // The generated code is built without floating-point contraction, reduces in the
  // interpreter's order and calls the same oneDNN kernels: every step's loss and every
  // final weight are the same bits, not merely close.
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "step " << i + 1;
  EXPECT_LT(a.back(), a.front());
  ASSERT_FALSE(cpu.variables.empty()) << "no checkpoint from the cpu run";
  ASSERT_EQ(cpu.variables.size(), interp.variables.size());
  for (const auto& [name, want] : interp.variables) {
    const kiln::Array& got = cpu.variables.at(name);
    ASSERT_EQ(got.nbytes(), want.nbytes()) << name;
    EXPECT_EQ(std::memcmp(got.bytes(), want.bytes(), want.nbytes()), 0) << "variable " << name << " differs";
  }
  EXPECT_EQ(final_record(cpu.records)["test_accuracy"], final_record(interp.records)["test_accuracy"]);
  EXPECT_EQ(final_record(cpu.records)["backend"], "cpu");
}

}  // namespace
