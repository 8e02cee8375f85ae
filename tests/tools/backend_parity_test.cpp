// `kiln train --backend cpu` and `--backend interp` with the same seed follow the same
// loss curve: the compiled step computes what the interpreter computes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/run_kiln.h"

namespace {

std::vector<nlohmann::json> train(const std::string& backend, const std::string& model, int steps) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("kiln-parity-" + backend + "-" + model + "-" + std::to_string(getpid()) + ".jsonl");
  const std::string cmd = std::string(KILN_BINARY) + " train --quiet --backend " + backend + " --model " + model +
                          " --steps " + std::to_string(steps) +
                          " --batch-size 64 --train-limit 4096 --test-limit 1000 --log-every 10 --seed 3 --metrics-out " +
                          path.string() + " 2>&1";
  const testkit::Result r = testkit::run_command(cmd);
  EXPECT_EQ(r.status, 0) << r.output;
  std::vector<nlohmann::json> records;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) records.push_back(nlohmann::json::parse(line));
  std::filesystem::remove(path);
  return records;
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

TEST(BackendParity, MlpLossCurveMatchesFor100Steps) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const auto cpu = train("cpu", "mlp", 100), interp = train("interp", "mlp", 100);
  const auto a = progress_losses(cpu), b = progress_losses(interp);
  ASSERT_EQ(a.size(), 10u);
  ASSERT_EQ(a.size(), b.size());
  // The generated code is built without floating-point contraction and reduces in the
  // interpreter's order, so the curves agree to rounding (today: bit for bit). Chaotic
  // training would amplify any systematic difference well past this bound by step 100.
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * std::max(1.0, b[i])) << "record " << i;
  EXPECT_LT(a.back(), a.front());
  EXPECT_NEAR(final_record(cpu)["test_accuracy"].get<double>(), final_record(interp)["test_accuracy"].get<double>(),
              0.005);
  EXPECT_EQ(final_record(cpu)["backend"], "cpu");
}

}  // namespace
