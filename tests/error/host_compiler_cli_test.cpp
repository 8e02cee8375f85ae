// Issue 19: a host compiler that hangs or fails, through the real `kiln` process. kiln
// time-limits the compiler (KILN_CXX_TIMEOUT), kills its whole process group, falls back
// to the interpreter with one clear warning, and its final record says what ran.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/run_kiln.h"
#include "support/dir_test.h"

namespace {
namespace fs = std::filesystem;
using testkit::contains;
using testkit::Result;

const std::string kRun = " train --backend cpu --steps 1 --train-limit 64 --test-limit 64 --batch-size 32 --quiet ";

class HostCompiler : public testkit::DirTest {
 protected:
  void SetUp() override {
    if (!testkit::have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    DirTest::SetUp();
  }

  // A fake compiler: `version_part` runs for `--version`, `compile_part` for a compile.
  // Each records the pid of a child it starts, to check the child was killed too.
  fs::path fake_cxx(const std::string& version_part, const std::string& compile_part) {
    const fs::path script = dir_ / "fake-c++";
    std::ofstream(script) << "#!/bin/sh\n"
                          << "if [ \"$1\" = --version ]; then " << version_part << "; fi\n"
                          << compile_part << "\n";
    fs::permissions(script, fs::perms::owner_all);
    return script;
  }
  Result run(const std::string& env) {
    const auto t0 = std::chrono::steady_clock::now();
    const Result r = testkit::run_command("timeout 120 env " + env + " " + KILN_BINARY + kRun + "--metrics-out " +
                                          (dir_ / "m.jsonl").string() + " 2>&1");
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }
  nlohmann::json final_record() {
    std::ifstream in(dir_ / "m.jsonl");
    std::string line, last;
    while (std::getline(in, line)) last = line;
    return nlohmann::json::parse(last);
  }
  // Whether the child the fake compiler started still runs (a zombie that no init reaps
  // does not count: it was killed).
  bool child_alive() {
    std::ifstream in(dir_ / "child.pid");
    pid_t pid = 0;
    if (!(in >> pid) || pid <= 0) return false;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    const size_t paren = line.rfind(')');
    return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
  }
  static size_t count(const std::string& s, const std::string& part) {
    size_t n = 0;
    for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
    return n;
  }
  double seconds_ = 0;
};

TEST_F(HostCompiler, AVersionProbeThatNeverReturnsIsKilledAndTheRunFallsBack) {
  const std::string hang = "sleep 1000 & echo $! > " + (dir_ / "child.pid").string() + "; wait";
  const fs::path cxx = fake_cxx(hang, "exit 1");
  const Result r = run("KILN_CXX=" + cxx.string() + " KILN_CXX_TIMEOUT=2");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_LT(seconds_, 100) << r.output;
  EXPECT_TRUE(contains(r.output, "did not answer within 2 s and was killed")) << r.output;
  EXPECT_EQ(count(r.output, "warning: native compilation failed"), 1u) << r.output;
  EXPECT_FALSE(child_alive()) << "the compiler's child outlived the time limit";
  EXPECT_EQ(final_record()["backend"], "interp");
  EXPECT_EQ(final_record()["backend_requested"], "cpu");
}

TEST_F(HostCompiler, ACompileThatNeverReturnsIsKilledAndTheRunFallsBack) {
  const std::string hang = "sleep 1000 & echo $! > " + (dir_ / "child.pid").string() + "; wait";
  const fs::path cxx = fake_cxx("echo 'fake c++ 1.0'; exit 0", hang);
  const Result r = run("KILN_CXX=" + cxx.string() + " KILN_CXX_TIMEOUT=2");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "did not finish compiling")) << r.output;
  EXPECT_TRUE(contains(r.output, "within 2 s")) << r.output;
  EXPECT_FALSE(child_alive()) << "the compiler's child outlived the time limit";
  EXPECT_EQ(final_record()["backend"], "interp");
  EXPECT_EQ(final_record()["interpreter_fallbacks"], 2);  // the train and the eval graph
  EXPECT_TRUE(contains(r.output, "ran on the interpreter")) << r.output;
}

TEST_F(HostCompiler, AFailingCompilerIsReportedOnceWithAShortExcerpt) {
  const Result r = run("KILN_CXX=/bin/false");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(count(r.output, "warning: native compilation failed"), 1u) << r.output;
  EXPECT_TRUE(contains(r.output, "'/bin/false --version' failed (exit 1)")) << r.output;
  // GNU false prints its version and licence for --version: at most once, cut short.
  EXPECT_LE(count(r.output, "false (GNU coreutils)"), 1u) << r.output;
  EXPECT_EQ(final_record()["backend"], "interp");
}

TEST_F(HostCompiler, ABadTimeLimitIsAConfigurationError) {
  const Result r = run("KILN_CXX_TIMEOUT=soon");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "[KILN_CXX_TIMEOUT] 'soon' is not valid: give a positive number of seconds")) << r.output;
}

}  // namespace
