// A training step that does not advance global_step (issue 19): a compiled step that does
// nothing used to loop forever; the loop now stops with an error. The no-op step comes
// from a KILN_CXX wrapper that compiles kiln's source with kiln_step renamed away and an
// empty kiln_step added, so everything else about the object is as kiln built it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/run_kiln.h"
#include "support/temp_files.h"

namespace {
namespace fs = std::filesystem;
using testkit::contains;

using testkit::have_data;

// Passes everything but the last argument (kiln's generated source, or the unit of it
// that holds kiln_step) through to c++.
const char* kNoOpCompiler = R"(#!/bin/sh
last=""
for a; do last="$a"; done
case "$last" in *.cpp) ;; *) exec c++ "$@" ;; esac
# The step is cut into units compiled one by one: only the one with the entry point changes.
grep -q 'extern "C" void kiln_step(' "$last" || exec c++ "$@"
noop="${last%.cpp}-noop.cpp"
{ cat "$last"; printf '\n#undef kiln_step\nextern "C" void kiln_step(const void*, void*, void**) {}\n'; } > "$noop" || exit 1
n=$#
for a; do
  shift
  n=$((n - 1))
  if [ "$n" -gt 0 ]; then set -- "$@" "$a"; fi
done
exec c++ -Dkiln_step=kiln_step_real "$@" "$noop"
)";

TEST(StepProgress, AStepThatDoesNotAdvanceGlobalStepStopsTheRun) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const fs::path t = testkit::fresh_dir("step-progress");
  fs::create_directories(t);
  const fs::path cxx = t / "noop-c++";
  std::ofstream(cxx) << kNoOpCompiler;
  fs::permissions(cxx, fs::perms::owner_all);
  const testkit::Result r = testkit::run_command(
      "KILN_CXX='" + cxx.string() + "' timeout 240 " + KILN_BINARY +
      " train --backend cpu --steps 5 --batch-size 32 --train-limit 256 --test-limit 100 --log-every 1 --model-dir " +
      (t / "model").string() + " 2>&1");
  EXPECT_EQ(r.status, 1) << r.output;  // 124 would be the time-out of a loop that never ends
  EXPECT_TRUE(contains(r.output, "kiln: error: [train] global_step did not advance: it was 0 before a training step and "
                                 "is 0 after it"))
      << r.output;
  EXPECT_FALSE(fs::exists(t / "model" / "ckpt-000000000000.kiln")) << "nothing saved for the step";
  fs::remove_all(t);
}

}  // namespace
