#include "kiln/interrupts.h"

#include <pthread.h>
#include <signal.h>

#include <csignal>
#include <thread>

namespace kiln {
namespace {

std::atomic<bool> g_requested{false};
std::atomic<bool> g_catching{false};
std::atomic<bool> g_routed{false};

sigset_t sigint_only() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  return set;
}

// Dies of SIGINT, as an uncaught Ctrl-C would: the shell then sees "killed by SIGINT".
[[noreturn]] void die_of_sigint() {
  std::signal(SIGINT, SIG_DFL);
  const sigset_t set = sigint_only();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  raise(SIGINT);
  std::_Exit(130);  // not reached
}

void watch() {
  const sigset_t set = sigint_only();
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (!g_catching.load() || g_requested.exchange(true)) die_of_sigint();
  }
}

extern "C" void on_sigint(int) {
  g_requested.store(true);
  std::signal(SIGINT, SIG_DFL);
}

}  // namespace

void route_interrupts_to_watcher() {
  if (g_routed.exchange(true)) return;
  // Undo an inherited SIG_IGN (a background job of a script): Ctrl-C and `kill -INT` must
  // still stop a training run at a step boundary.
  std::signal(SIGINT, SIG_DFL);
  const sigset_t set = sigint_only();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread(watch).detach();
}

CatchInterrupts::CatchInterrupts() {
  if (g_routed.load())
    g_catching.store(true);
  else
    std::signal(SIGINT, on_sigint);
}

CatchInterrupts::~CatchInterrupts() {
  if (g_routed.load())
    g_catching.store(false);
  else
    std::signal(SIGINT, SIG_DFL);
}

const std::atomic<bool>* interrupt_requested() { return &g_requested; }

}  // namespace kiln
