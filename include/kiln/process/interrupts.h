// Ctrl-C for training programs, without a signal handler on any compute thread.
//
// A SIGINT handler runs on whichever thread the kernel picks, on top of that thread's stack.
// When it lands on a thread inside a JIT-generated oneDNN kernel, the handler's frame can
// overwrite data the kernel keeps below its stack pointer; kiln saw that as heap corruption
// ("corrupted size vs. prev_size") in the matmul after a Ctrl-C, about one run in four.
// So while kiln catches interrupts, SIGINT is blocked in every thread that computes, and
// one small watcher thread takes it with sigwait(): no kernel is ever interrupted by it.
#pragma once

#include <atomic>

namespace kiln {

// For programs that own main() (the `kiln` command): call first thing, before any other
// thread exists (threads inherit the mask). Blocks SIGINT for the whole process and starts
// the watcher. SIGUSR1 counts as SIGINT there: mpirun forwards it to every rank of a
// data-parallel job, while its own Ctrl-C terminates them. A SIGINT while nothing catches interrupts ends the process the usual way
// (killed by SIGINT). Calling it again does nothing. Child processes inherit the blocked
// mask: whoever starts one (the host compiler) unblocks SIGINT in it.
void route_interrupts_to_watcher();

// While a CatchInterrupts lives, the first SIGINT sets interrupt_requested() and the
// program stops at its next safe point; a second one calls `on_second` (by default: end
// the process by SIGINT; it runs in a signal handler, so it must be async-signal-safe).
// Without route_interrupts_to_watcher() (a library inside another program, e.g. Python),
// it blocks SIGINT in the calling thread and in OpenMP's threads for its lifetime and
// installs a handler that only ever runs on threads that compute nothing; on destruction
// the host's handler and the calling thread's mask come back, so a SIGINT that arrives
// after the last step reaches the host program.
class CatchInterrupts {
 public:
  explicit CatchInterrupts(void (*on_second)() = nullptr);
  ~CatchInterrupts();
  CatchInterrupts(const CatchInterrupts&) = delete;
  CatchInterrupts& operator=(const CatchInterrupts&) = delete;

 private:
  struct Scoped;
  Scoped* scoped_ = nullptr;
};

// Set by the first caught SIGINT; cleared when a CatchInterrupts starts.
const std::atomic<bool>* interrupt_requested();

}  // namespace kiln
