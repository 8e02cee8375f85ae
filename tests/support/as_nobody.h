// Running part of a test as an unprivileged user, for what a non-root user meets (an
// unwritable directory) when the suite runs as root, as CI does.
#pragma once
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

namespace testkit {

inline constexpr uid_t kNobody = 65534;  // Debian's nobody:nogroup

// Runs `body` in a forked child as nobody:nogroup; returns body's result, or -1 when the
// privileges could not be dropped or the child died. The child must not use gtest
// assertions (they do not reach the parent): return a code and print what went wrong.
inline int run_as_nobody(const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(kNobody, kNobody, kNobody) != 0 ||
        ::setresuid(kNobody, kNobody, kNobody) != 0)
      _exit(255);
    _exit(body());
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) == 255) return -1;
  return WEXITSTATUS(st);
}

}  // namespace testkit
