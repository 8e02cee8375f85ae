// Process helpers for tests of locks and clean-ups: a pid that is certainly gone, and
// waiting for a condition another process brings about.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace testkit {

// The pid of a child that has exited and been reaped: no process has it (until reused).
inline pid_t dead_pid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

// Polls `done` every 10 ms for up to `seconds`; false on time-out.
template <class F>
bool wait_for(F done, int seconds = 60) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace testkit
