// Keeps every CPU this process may run on busy (one spinning thread each) while alive: the
// "other work" kiln's OpenMP spin choice must notice (src/process/openmp_wait.h).
#pragma once
#include <sched.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace kiln::testkit {

class BusyCpus {
 public:
  BusyCpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    const int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    for (int i = 0; i < n; ++i)
      threads_.emplace_back([this] {
        volatile uint64_t x = 0;
        while (!stop_.load(std::memory_order_relaxed)) x = x + 1;
      });
  }
  ~BusyCpus() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }
  BusyCpus(const BusyCpus&) = delete;
  BusyCpus& operator=(const BusyCpus&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace kiln::testkit
