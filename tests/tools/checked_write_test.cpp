// Every write kiln makes is checked (issue 19): a lost write of metrics or of the report
// on stdout fails the command with a clear error instead of exiting 0. /dev/full stands in
// for a full disk: every write to it fails with ENOSPC.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/run_kiln.h"
#include "support/temp_files.h"

namespace {
namespace fs = std::filesystem;
using testkit::contains;
using testkit::Result;
using testkit::run_kiln;

using testkit::have_data;

const std::string kRun = "train --backend interp --steps 2 --batch-size 32 --train-limit 256 --test-limit 100 ";

// `kiln <args>` with stdout on /dev/full and stderr collected.
Result run_kiln_stdout_full(const std::string& args) {
  return testkit::run_command(std::string(KILN_BINARY) + " " + args + " 2>&1 >/dev/full");
}

TEST(CheckedWrite, MetricsOutOnAFullDiskFailsTheRun) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  for (const char* log_every : {"1", "0"}) {  // the first progress record, or only the final one
    const Result r = run_kiln(kRun + "--log-every " + log_every + " --metrics-out /dev/full");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "kiln: error: [--metrics-out] cannot write to '/dev/full': No space left on device"))
        << r.output;
  }
}

TEST(CheckedWrite, AReportLostOnStdoutFailsTheCommand) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const fs::path dir = testkit::fresh_dir("checked-stdout");
  fs::create_directories(dir);
  for (const char* action : {"stats", "stats --json", "verify", "verify --json"}) {
    const Result r = run_kiln_stdout_full(std::string("cache ") + action + " --dir " + dir.string());
    EXPECT_EQ(r.status, 1) << action << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "kiln: error: [stdout] output was lost: No space left on device")) << r.output;
  }
  if (have_data()) {
    const Result r = run_kiln_stdout_full(kRun + "--quiet");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "kiln: error: [stdout] output was lost")) << r.output;
  }
  fs::remove_all(dir);
}

}  // namespace
