#include "kiln/process/interrupts.h"

#include <pthread.h>
#include <signal.h>

#include <csignal>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <omp.h>

namespace kiln {
namespace {

std::atomic<bool> g_requested{false};
std::atomic<bool> g_catching{false};
std::atomic<bool> g_routed{false};
std::atomic<void (*)()> g_on_second{nullptr};

sigset_t sigint_only() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  return set;
}

// What the watcher takes: SIGINT, and SIGUSR1, which mpirun forwards to every rank of a
// data-parallel job (its own Ctrl-C terminates the ranks): `kill -USR1 <mpirun>` is the
// job's Ctrl-C.
sigset_t watched() {
  sigset_t set = sigint_only();
  sigaddset(&set, SIGUSR1);
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

// One SIGINT, taken by a watcher thread or (scoped) by a handler on a thread that does not
// compute: the first while catching asks for a stop. Async-signal-safe.
void on_sigint() {
  if (g_catching.load() && !g_requested.exchange(true)) return;
  void (*second)() = g_on_second.load();
  if (second && g_catching.load()) return second();
  die_of_sigint();
}

extern "C" void sigint_handler(int) { on_sigint(); }

void watch_forever() {
  const sigset_t set = watched();
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) == 0) on_sigint();
  }
}

// Blocks SIGINT in every OpenMP thread (the calling thread is the team's master; threads
// created later inherit its mask). They stay blocked: they never need it.
void block_in_openmp_threads() {
#pragma omp parallel
  {
    const sigset_t set = sigint_only();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
  }
}

}  // namespace

// For one CatchInterrupts in a program that did not route interrupts (Python): SIGINT is
// blocked in the calling thread and OpenMP's, a handler is installed for the process, and
// a sleeping thread keeps SIGINT unblocked so the kernel always has a thread that computes
// nothing to run the handler on (other threads of the host, e.g. OpenBLAS's, may take it
// too: none of them runs kiln's kernels).
struct CatchInterrupts::Scoped {
  sigset_t old_mask;
  struct sigaction old_action {};
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::thread sleeper;

  Scoped() {
    struct sigaction sa {};
    sa.sa_handler = sigint_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_action);
    const sigset_t set = sigint_only();
    pthread_sigmask(SIG_BLOCK, &set, &old_mask);
    block_in_openmp_threads();
    sleeper = std::thread([this] {
      const sigset_t s = sigint_only();
      pthread_sigmask(SIG_UNBLOCK, &s, nullptr);
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return stop; });
      pthread_sigmask(SIG_BLOCK, &s, nullptr);
    });
  }
  ~Scoped() {
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    cv.notify_all();
    sleeper.join();
    sigaction(SIGINT, &old_action, nullptr);
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);  // a pending SIGINT reaches the host now
  }
};

void route_interrupts_to_watcher() {
  if (g_routed.exchange(true)) return;
  // Undo an inherited SIG_IGN (a background job of a script): Ctrl-C and `kill -INT` must
  // still stop a training run at a step boundary.
  std::signal(SIGINT, SIG_DFL);
  const sigset_t set = watched();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread(watch_forever).detach();
}

CatchInterrupts::CatchInterrupts(void (*on_second)()) {
  g_on_second.store(on_second);
  g_requested.store(false);
  if (!g_routed.load()) scoped_ = new Scoped();
  g_catching.store(true);
}

CatchInterrupts::~CatchInterrupts() {
  g_catching.store(false);
  delete scoped_;
  g_on_second.store(nullptr);
}

const std::atomic<bool>* interrupt_requested() { return &g_requested; }

}  // namespace kiln
