#include "process/openmp_wait.h"

#include <sched.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

namespace kiln::openmp_wait {

CpuTimes parse_proc_stat(const std::string& text, const std::vector<int>& cpus) {
  CpuTimes t;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    int n = -1;
    if (line.rfind("cpu", 0) != 0 || std::sscanf(line.c_str(), "cpu%d", &n) != 1) continue;  // "cpu " is the sum
    bool wanted = false;
    for (int c : cpus) wanted = wanted || c == n;
    if (!wanted) continue;
    std::istringstream fields(line.substr(line.find(' ')));
    uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
    if (!(fields >> user >> nice >> system >> idle >> iowait >> irq >> softirq)) continue;
    t.busy += user + nice + system + irq + softirq;
    t.total += user + nice + system + irq + softirq + idle + iowait;
    ++t.cpus;
  }
  return t;
}

double busy_cpus(const CpuTimes& before, const CpuTimes& after) {
  if (before.cpus == 0 || before.cpus != after.cpus || after.total <= before.total || after.busy < before.busy)
    return 0.0;
  const double per_cpu = static_cast<double>(after.total - before.total) / before.cpus;
  return static_cast<double>(after.busy - before.busy) / per_cpu;
}

int spins_for(double busy) { return busy >= kBusyCpus ? kBusySpins : kQuietSpins; }

namespace {

std::string read_proc_stat() {
  std::ifstream in("/proc/stat");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

}  // namespace

int choose_spins(int window_ms) {
  const std::vector<int> cpus = allowed_cpus();
  // Busy means busy in two windows running: a process starting beside this one (the other
  // end of a shell pipe, say) is not other work to leave the cores to.
  for (int window = 0; window < 2; ++window) {
    const CpuTimes before = parse_proc_stat(read_proc_stat(), cpus);
    std::this_thread::sleep_for(std::chrono::milliseconds(window_ms));
    const CpuTimes after = parse_proc_stat(read_proc_stat(), cpus);
    if (spins_for(busy_cpus(before, after)) == kQuietSpins) return kQuietSpins;
  }
  return kBusySpins;
}

}  // namespace kiln::openmp_wait
