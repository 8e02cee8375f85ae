// The spin-count rule (src/process/openmp_wait.h) on two recorded /proc/stat snapshots
// (tests/process/fixtures; python/kiln/_src/openmp_wait.py is tested on the same files), and
// on this machine with every allowed CPU kept busy.
#include "process/openmp_wait.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "support/busy_cpus.h"

namespace kiln::openmp_wait {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::filesystem::path(KILN_SOURCE_DIR) / "tests/process/fixtures" / name);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(OpenMpWait, ReadsTheAskedForCpusOnly) {
  const CpuTimes both = parse_proc_stat(fixture("proc_stat_before.txt"), {0, 1});
  EXPECT_EQ(both.cpus, 2);
  EXPECT_EQ(both.busy, 400u + 5 + 100 + 10 + 500 + 5 + 200 + 10);  // user nice system irq softirq
  EXPECT_EQ(both.total, both.busy + 2500 + 25 + 2500 + 25);        // + idle iowait; not steal
  const CpuTimes one = parse_proc_stat(fixture("proc_stat_before.txt"), {1});
  EXPECT_EQ(one.cpus, 1);
  EXPECT_EQ(one.busy, 500u + 5 + 200 + 10);
  EXPECT_EQ(parse_proc_stat(fixture("proc_stat_before.txt"), {7}).cpus, 0);
  EXPECT_EQ(parse_proc_stat("cpu0 1 2\n", {0}).cpus, 0);  // too few fields: not counted
}

TEST(OpenMpWait, CountsOtherWorkInCpus) {
  const std::string a = fixture("proc_stat_before.txt"), b = fixture("proc_stat_after.txt");
  // cpu1 ran 6 of its 10 ticks, cpu0 none of 5: 6 busy ticks in 15 / 2 per CPU.
  EXPECT_DOUBLE_EQ(busy_cpus(parse_proc_stat(a, {0, 1}), parse_proc_stat(b, {0, 1})), 6.0 / 7.5);
  EXPECT_EQ(spins_for(6.0 / 7.5), kBusySpins);
  EXPECT_DOUBLE_EQ(busy_cpus(parse_proc_stat(a, {0}), parse_proc_stat(b, {0})), 0.0);
  EXPECT_EQ(spins_for(0.0), kQuietSpins);
  EXPECT_EQ(spins_for(kBusyCpus), kBusySpins);
  EXPECT_EQ(spins_for(kBusyCpus - 0.01), kQuietSpins);
  // Snapshots that cannot be compared (another CPU set, no time passed) say quiet.
  EXPECT_EQ(busy_cpus(parse_proc_stat(a, {0, 1}), parse_proc_stat(b, {0})), 0.0);
  EXPECT_EQ(busy_cpus(parse_proc_stat(a, {0, 1}), parse_proc_stat(a, {0, 1})), 0.0);
}

TEST(OpenMpWait, ShortSpinsBesideWorkOnEveryAllowedCpu) {
  int spins = 0;
  {
    testkit::BusyCpus busy;
    spins = choose_spins(200);
  }
  EXPECT_EQ(spins, kBusySpins);
}

}  // namespace
}  // namespace kiln::openmp_wait
