#include "cache/safety.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "cache/layout.h"

namespace kiln::cache {
namespace {

std::string octal(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

}  // namespace

std::string unsafe_reason(const std::string& path, PathKind kind) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return path + " cannot be examined: " + std::strerror(errno);
  if (S_ISLNK(st.st_mode)) return path + " is a symlink (refused: entries must not be reached through links)";
  if (kind == PathKind::directory && !S_ISDIR(st.st_mode)) return path + " is not a directory";
  if (kind == PathKind::file && !S_ISREG(st.st_mode)) return path + " is not a regular file";
  if (st.st_uid != ::geteuid())
    return path + " is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
           std::to_string(::geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return path + " is writable by group or others (mode " + octal(st.st_mode) +
           "); another user could plant code in it (chmod go-w to fix)";
  return {};
}

std::string ensure_private_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return "cannot create " + dir + ": " + std::strerror(errno);
  return unsafe_reason(dir, PathKind::directory);
}

std::string prepare_cache_root(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // Without trailing slashes: lstat("link/") would follow a symlinked root.
  std::string normal = fs::path(dir).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  const fs::path root = normal;
  // Create missing components one at a time, each 0700 (create_directories would use the
  // umask's mode, typically 0755).
  fs::path cur;
  for (const auto& part : root) {
    cur /= part;
    if (fs::exists(fs::symlink_status(cur, ec))) continue;
    if (::mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST)
      return "cannot create the cache directory " + cur.string() + ": " + std::strerror(errno);
  }
  std::string why = unsafe_reason(root.string(), PathKind::directory);
  if (!why.empty()) return "the cache directory is unsafe: " + why;
  if (::access(root.c_str(), W_OK | X_OK) != 0)
    return "the cache directory " + root.string() + " is not writable: " + std::strerror(errno);
  return claim_cache_root(root.string());
}

bool sync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

}  // namespace kiln::cache
