// `kiln train` with --graph-compiler-cache-dir across processes, and `kiln cache`.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/run_kiln.h"

namespace {

namespace fs = std::filesystem;

using testkit::Result;
using testkit::run_kiln;

nlohmann::json final_record(const fs::path& metrics) {
  std::ifstream in(metrics);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return nlohmann::json::parse(last);
}

const std::string kTrain = "train --steps 2 --train-limit 512 --test-limit 100 --batch-size 64 --quiet ";

fs::path fresh(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("kiln-train-cache-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  return d;
}

// A learning-rate sweep compiles once: the rate is a hyperparameter of the graph (kiln/ir/ops.h),
// fed to the compiled step, so the second run loads the first one's step and trains with
// its own rate. So does another run length under a cosine schedule (the gpt's recipe).
TEST(TrainCompileCache, AnotherLearningRateOrRunLengthLoadsTheSameCompiledStep) {
  const fs::path dir = fresh("sweep"), m1 = fresh("s1.jsonl"), m2 = fresh("s2.jsonl");
  const std::string cache = "--graph-compiler-cache-dir " + dir.string() + " --metrics-out ";
  const Result a = run_kiln(kTrain + "--learning-rate 0.05 " + cache + m1.string());
  ASSERT_EQ(a.status, 0) << a.output;
  const Result b = run_kiln(kTrain + "--learning-rate 0.2 " + cache + m2.string());
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_EQ(final_record(m1)["compile"]["cache"], "miss");
  EXPECT_EQ(final_record(m2)["compile"]["cache"], "hit") << b.output;
  EXPECT_NE(final_record(m1)["final_loss"], final_record(m2)["final_loss"]) << "the second run used its own rate";
  const std::string cosine = "--learning-rate-schedule cosine --warmup-steps 1 ";
  const Result c = run_kiln(kTrain + cosine + cache + m1.string());
  ASSERT_EQ(c.status, 0) << c.output;
  const Result d = run_kiln("train --steps 3 --train-limit 512 --test-limit 100 --batch-size 64 --quiet " + cosine +
                            "--learning-rate 0.1 " + cache + m2.string());
  ASSERT_EQ(d.status, 0) << d.output;
  EXPECT_EQ(final_record(m1)["compile"]["cache"], "miss") << "a schedule is another graph";
  EXPECT_EQ(final_record(m2)["compile"]["cache"], "hit") << d.output;
  fs::remove_all(dir);
  fs::remove(m1);
  fs::remove(m2);
}

TEST(TrainCompileCache, SecondRunHitsCompilesNothingAndTrainsTheSame) {
  const fs::path dir = fresh("dir"), m1 = fresh("m1.jsonl"), m2 = fresh("m2.jsonl");
  const Result a = run_kiln(kTrain + "--graph-compiler-cache-dir " + dir.string() + " --metrics-out " + m1.string());
  ASSERT_EQ(a.status, 0) << a.output;
  const Result b = run_kiln(kTrain + "--graph-compiler-cache-dir " + dir.string() + " --metrics-out " + m2.string());
  ASSERT_EQ(b.status, 0) << b.output;
  const nlohmann::json f1 = final_record(m1), f2 = final_record(m2);
  EXPECT_EQ(f1["compile"]["cache"], "miss");
  EXPECT_EQ(f1["compile_cache"], "miss");
  EXPECT_GT(f1["compile"]["cxx_seconds"].get<double>(), 0);
  EXPECT_EQ(f2["compile"]["cache"], "hit") << b.output;
  EXPECT_EQ(f2["compile"]["cache_misses"], 0);
  EXPECT_EQ(f2["compile"]["cxx_seconds"].get<double>(), 0) << "the C++ compiler did not run";
  // The source is still generated (it is part of the key), in well under the compile's time.
  EXPECT_LT(f2["compile"]["codegen_seconds"].get<double>(), f1["compile"]["cxx_seconds"].get<double>());
  EXPECT_EQ(f1["final_loss"], f2["final_loss"]) << "identical training";
  EXPECT_EQ(f1["test_loss"], f2["test_loss"]);
  EXPECT_NE(b.output.find("cache hit"), std::string::npos) << b.output;

  // kiln cache over what the runs stored: two entries (train and eval graphs), one hit each.
  Result s = run_kiln("cache stats --json --dir " + dir.string());
  ASSERT_EQ(s.status, 0) << s.output;
  const nlohmann::json st = nlohmann::json::parse(s.output);
  EXPECT_EQ(st["entries"], 2);
  EXPECT_EQ(st["hits"], 2);
  EXPECT_GT(st["seconds_saved"].get<double>(), 0);
  Result l = run_kiln("cache list --dir " + dir.string());
  EXPECT_EQ(l.status, 0);
  EXPECT_NE(l.output.find("original"), std::string::npos) << l.output;
  EXPECT_EQ(run_kiln("cache verify --dir " + dir.string()).status, 0);

  // Damage one entry: verify names it and fails; the next run repairs it.
  const nlohmann::json lj = nlohmann::json::parse(run_kiln("cache list --json --dir " + dir.string()).output);
  const std::string so = lj["entries"][0]["dir"].get<std::string>() + "/step.so";
  fs::resize_file(so, 100);
  const Result v = run_kiln("cache verify --dir " + dir.string());
  EXPECT_EQ(v.status, 1) << v.output;
  EXPECT_NE(v.output.find("truncated"), std::string::npos) << v.output;
  const Result c = run_kiln(kTrain + "--graph-compiler-cache-dir " + dir.string() + " --metrics-out " + m2.string());
  EXPECT_EQ(c.status, 0) << c.output;
  EXPECT_NE(c.output.find("not loaded"), std::string::npos) << c.output;
  EXPECT_EQ(final_record(m2)["compile"]["cache_misses"], 1);
  EXPECT_EQ(run_kiln("cache verify --dir " + dir.string()).status, 0) << "repaired";

  // prune to a tiny size evicts everything; clear empties the rest.
  EXPECT_EQ(run_kiln("cache prune --max-size 1 --dir " + dir.string()).status, 0);
  EXPECT_EQ(nlohmann::json::parse(run_kiln("cache stats --json --dir " + dir.string()).output)["entries"], 0);
  run_kiln(kTrain + "--graph-compiler-cache-dir " + dir.string());
  const Result cl = run_kiln("cache clear --dir " + dir.string());
  EXPECT_NE(cl.output.find("removed 2 entries"), std::string::npos) << cl.output;
  fs::remove_all(dir);
  fs::remove(m1);
  fs::remove(m2);
}

TEST(TrainCompileCache, UnusableCacheWarnsAndTrainsUnlessStrict) {
  const fs::path file = fresh("file");
  std::ofstream(file) << "not a directory";
  const Result a = run_kiln(kTrain + "--graph-compiler-cache-dir " + (file / "cache").string());
  EXPECT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find("warning: [graph_compiler_cache_dir] cannot create"), std::string::npos) << a.output;
  const Result b = run_kiln(kTrain + "--cache-strict --graph-compiler-cache-dir " + (file / "cache").string());
  EXPECT_EQ(b.status, 2) << b.output;
  EXPECT_NE(b.output.find("error: [--graph-compiler-cache-dir] cannot create"), std::string::npos) << b.output;
  EXPECT_EQ(run_kiln("cache list --dir " + file.string()).status, 2);
  fs::remove(file);
}

}  // namespace
