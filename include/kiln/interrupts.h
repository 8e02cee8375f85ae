// Ctrl-C for training programs, without a signal handler on any compute thread.
//
// A SIGINT handler runs on whichever thread the kernel picks, on top of that thread's stack.
// When it lands on a thread inside a JIT-generated oneDNN kernel, the handler's frame can
// overwrite data the kernel keeps below its stack pointer; kiln saw that as heap corruption
// ("corrupted size vs. prev_size") in the matmul after a Ctrl-C, about one run in four.
// So SIGINT is blocked in every thread, and one small watcher thread takes it with
// sigwait(): no kernel is ever interrupted by it.
#pragma once

#include <atomic>

namespace kiln {

// Call first thing in main(), before any other thread exists (threads inherit the mask).
// Blocks SIGINT in the calling thread and starts the watcher. A SIGINT while nothing
// catches interrupts ends the process the usual way (killed by SIGINT). Calling it again
// does nothing. Child processes inherit the blocked mask: whoever starts one (the host
// compiler) unblocks SIGINT in it, so a Ctrl-C on the terminal still reaches it.
void route_interrupts_to_watcher();

// While a CatchInterrupts lives, the first SIGINT sets interrupt_requested() and the
// program stops at its next safe point; a second one ends the process the usual way.
// Without route_interrupts_to_watcher() (a program embedding the library), it installs a
// plain handler instead, as before.
class CatchInterrupts {
 public:
  CatchInterrupts();
  ~CatchInterrupts();
  CatchInterrupts(const CatchInterrupts&) = delete;
  CatchInterrupts& operator=(const CatchInterrupts&) = delete;
};

// Set by the first caught SIGINT; stays set for the rest of the process.
const std::atomic<bool>* interrupt_requested();

}  // namespace kiln
