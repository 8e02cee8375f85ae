#include "cache/lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace kiln::cache {

KeyLock::KeyLock(const std::string& lock_path) {
  fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) error_ = "cannot open the lock file " + lock_path + ": " + std::strerror(errno);
}

KeyLock::~KeyLock() {
  release();
  if (fd_ >= 0) ::close(fd_);
}

bool KeyLock::acquire(double timeout_seconds) {
  if (fd_ < 0) return false;
  if (held_) return true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  for (;;) {
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return held_ = true;
    if (errno != EWOULDBLOCK && errno != EINTR) {
      error_ = std::string("flock failed: ") + std::strerror(errno);
      return false;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void KeyLock::release() {
  if (held_) ::flock(fd_, LOCK_UN);
  held_ = false;
}

}  // namespace kiln::cache
