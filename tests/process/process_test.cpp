// tune_process: OpenMP spin waits chosen from how busy the CPUs are (GOMP_SPINCOUNT=10000
// quiet, 1000 beside other work) by re-executing the program once with the variable set,
// unless the user chose a wait policy or spin count. The child test
// runs in a fresh copy of this binary (it re-executes itself) and prints what it sees.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kiln/process/process.h"
#include "support/busy_cpus.h"

namespace kiln {
namespace {

std::string run_child(const std::string& env) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string cmd = "env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY -u KILN_KEEP_OPENMP_WAIT " + env + " '" + self +
                          "' --gtest_also_run_disabled_tests --gtest_filter='ProcessChild.DISABLED_Tune' 2>&1";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    EXPECT_EQ(pclose(p), 0) << out;
  }
  return out;
}

TEST(Process, ReexecutesOnceWithAChosenSpinCount) {
  const std::string out = run_child("");
  // Quiet or busy depends on what else runs now (ctest runs tests side by side).
  EXPECT_TRUE(out.find("child: spin=10000 runs=1\n") != std::string::npos ||
              out.find("child: spin=1000 runs=1\n") != std::string::npos)
      << out;
}

TEST(Process, ShortSpinWaitsBesideWorkOnEveryCpu) {
  std::string out;
  {
    testkit::BusyCpus busy;
    out = run_child("");
  }
  EXPECT_NE(out.find("child: spin=1000 runs=1\n"), std::string::npos) << out;
}

TEST(Process, LeavesTheUsersOpenMpSettingsAlone) {
  EXPECT_NE(run_child("GOMP_SPINCOUNT=5").find("child: spin=5 runs=0\n"), std::string::npos);
  EXPECT_NE(run_child("OMP_WAIT_POLICY=passive").find("child: spin=none runs=0\n"), std::string::npos);
}

// Run by the tests above in a child process: calls tune_process with this process's own
// command line, then prints GOMP_SPINCOUNT and whether it was re-executed.
TEST(ProcessChild, DISABLED_Tune) {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<char*> argv;
  for (size_t at = 0; at < all.size(); at = all.find('\0', at) + 1) argv.push_back(&all[at]);
  argv.push_back(nullptr);
  const bool reexecuted = std::getenv("KILN_KEEP_OPENMP_WAIT") != nullptr;
  tune_process(argv.data());
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  std::printf("child: spin=%s runs=%d\n", spin ? spin : "none", reexecuted ? 1 : 0);
}

}  // namespace
}  // namespace kiln
