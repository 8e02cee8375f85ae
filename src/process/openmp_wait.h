// How long kiln's OpenMP threads spin before they sleep, chosen once at start from how
// busy the CPUs this process may run on are (tune_process, and python/kiln/_src/openmp_wait.py,
// which applies the same rule before libgomp loads).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::openmp_wait {

// A quiet machine: waiting threads spin this long, so the fork and join of the next
// parallel region find them awake (a graph of many small kernels, e.g. a ShuffleNet step of
// ~1900 of them, sleeps and wakes its threads on nearly every one with short spins).
constexpr int kQuietSpins = 10000;
// Other work on these CPUs: waiting threads sleep soon, so they do not take the cores from
// it or from this process's own working thread.
constexpr int kBusySpins = 1000;
// Other processes' use of the allowed CPUs, in CPUs, from which a machine counts as busy
// (/proc/stat counts in 10 ms ticks: over the 50 ms window that is 0.2 CPU a tick).
constexpr double kBusyCpus = 0.5;

struct CpuTimes {
  uint64_t busy = 0;   // user + nice + system + irq + softirq jiffies
  uint64_t total = 0;  // busy + idle + iowait (steal and guest are not the machine's own)
  int cpus = 0;        // how many of the asked-for CPUs /proc/stat listed
};

// The times of the CPUs `cpus` (their numbers) in a /proc/stat text.
CpuTimes parse_proc_stat(const std::string& text, const std::vector<int>& cpus);

// How many CPUs' worth of work ran between two snapshots of the same CPUs; 0 if the
// snapshots cannot be compared.
double busy_cpus(const CpuTimes& before, const CpuTimes& after);

// The spin count for that much other work.
int spins_for(double busy);

// Samples /proc/stat over `window_ms` for the CPUs in this process's affinity mask (the
// caller sleeps meanwhile, so the work measured is other processes'), and when that finds
// them busy, over a second window: kBusySpins when both do, else kQuietSpins (also when it
// cannot be told).
int choose_spins(int window_ms = 50);

}  // namespace kiln::openmp_wait
