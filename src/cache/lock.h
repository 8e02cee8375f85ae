// A per-key inter-process lock (flock on a lock file beside the entry): one process
// compiles a key while the others that want it wait, then load what it stored.
#pragma once
#include <string>

namespace kiln::cache {

class KeyLock {
 public:
  KeyLock() = default;
  // Opens (creating, mode 0600) the lock file; not yet locked. A file that cannot be opened
  // leaves the lock invalid (acquire() then returns false).
  explicit KeyLock(const std::string& lock_path);
  ~KeyLock();
  KeyLock(const KeyLock&) = delete;
  KeyLock& operator=(const KeyLock&) = delete;

  // Waits up to timeout_seconds for the exclusive lock; false on timeout or error.
  bool acquire(double timeout_seconds);
  // Takes the lock only if free now.
  bool try_acquire() { return acquire(0); }
  bool held() const { return held_; }
  void release();
  // Why the lock could not be taken other than being busy (the lock file cannot be opened,
  // flock failed), so that callers need not report it as a time-out; "" if none.
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  bool held_ = false;
  std::string error_;
};

}  // namespace kiln::cache
