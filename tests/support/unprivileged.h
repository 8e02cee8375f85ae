// Running a command as an unprivileged user, for the permission cases: root ignores file
// permissions, so a test that wants "cannot search this directory" must not run as root.
#pragma once
#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>

namespace testkit {

// A prefix for a shell command line that runs it as user nobody (group nogroup): "" when
// this process is not root already; setpriv, else runuser, when it is root. nullopt when
// root and neither tool exists: the caller skips, saying so (unprivileged_skip_reason).
inline std::optional<std::string> unprivileged_prefix() {
  if (::geteuid() != 0) return std::string();
  if (!::getpwnam("nobody")) return std::nullopt;
  for (const char* dir : {"/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/"}) {
    if (std::filesystem::exists(std::string(dir) + "setpriv"))
      return std::string(dir) + "setpriv --reuid=nobody --regid=nogroup --clear-groups ";
  }
  for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/"}) {
    if (std::filesystem::exists(std::string(dir) + "runuser")) return std::string(dir) + "runuser -u nobody -- ";
  }
  return std::nullopt;
}

inline const char* unprivileged_skip_reason() {
  return "running as root without setpriv or runuser (util-linux) or without a user 'nobody': root ignores "
         "file permissions, so this case cannot be made";
}

// Gives `path` (recursively) to the user unprivileged_prefix() runs as; nothing when this
// process is not root (it runs the command as itself).
inline void give_to_unprivileged(const std::filesystem::path& path) {
  if (::geteuid() != 0) return;
  const passwd* pw = ::getpwnam("nobody");
  if (!pw) return;
  const auto give = [&](const std::filesystem::path& p) { (void)::lchown(p.c_str(), pw->pw_uid, pw->pw_gid); };
  give(path);
  if (std::filesystem::is_directory(std::filesystem::symlink_status(path)))
    for (const auto& e : std::filesystem::recursive_directory_iterator(path)) give(e.path());
}

}  // namespace testkit
