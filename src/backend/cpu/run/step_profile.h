// Where a compiled step's time goes, step by step (CompileOptions::profile, KILN_PROFILE=1): the generated code
// calls Runtime::tick after every kernel or library call; the host adds the time since
// the previous tick to that step's total. Printed to stderr when the executable goes away.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

class StepProfile {
 public:
  explicit StepProfile(size_t steps) : seconds_(steps, 0.0) {}
  void begin() { last_ = Clock::now(); ++runs_; }
  void tick(int step) {
    const auto now = Clock::now();
    seconds_[static_cast<size_t>(step)] += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }
  // A table of the steps taking the most time: kind, op, type and shape, ms per run, share.
  std::string report(const Schedule& s, const std::string& title, size_t top = 25) const;

 private:
  using Clock = std::chrono::steady_clock;
  std::vector<double> seconds_;
  Clock::time_point last_;
  int64_t runs_ = 0;
};


}  // namespace kiln::cpu
