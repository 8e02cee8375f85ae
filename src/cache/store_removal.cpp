// Deleting in the cache: only what kiln can prove is its own (see store.h). Directories
// are opened with O_NOFOLLOW and emptied name by name with unlinkat; nothing is removed
// recursively, so no symlink is ever followed and nothing unexpected is swept along.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "cache/layout.h"
#include "cache/lock.h"
#include "cache/safety.h"
#include "cache/store.h"

namespace kiln::cache {
namespace {

constexpr double kLiveStagingMaxAge = 24 * 3600;  // beyond this a live pid is a reused one

class Fd {
 public:
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

std::string octal(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

std::string errno_text(int err) { return std::strerror(err); }

// Opens directory `name` under `parent` (AT_FDCWD and an absolute path for a root) without
// following a symlink, and checks it is this user's and not writable by group or others.
std::string open_dir(int parent, const std::string& name, const std::string& shown, Fd& out) {
  out.reset(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (out.get() < 0) {
    const int err = errno;
    struct stat st {};
    if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
      return shown + " is a symlink (kiln never deletes through links)";
    if (err == ENOTDIR) return shown + " is not a directory";
    return shown + " cannot be opened: " + errno_text(err);
  }
  struct stat st {};
  if (::fstat(out.get(), &st) != 0) return shown + " cannot be examined: " + errno_text(errno);
  if (st.st_uid != ::geteuid())
    return shown + " is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
           std::to_string(::geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return shown + " is writable by group or others (mode " + octal(st.st_mode) + ")";
  return {};
}

std::vector<std::string> names_in(int dir_fd, std::string& why) {
  std::vector<std::string> out;
  const int fd = ::dup(dir_fd);
  DIR* d = fd < 0 ? nullptr : ::fdopendir(fd);
  if (!d) {
    why = errno_text(errno);
    if (fd >= 0) ::close(fd);
    return out;
  }
  ::rewinddir(d);
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  if (errno != 0) why = errno_text(errno);
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// "" if directory `fd` holds only an entry's files (regular files; empty directories of
// those names are a damaged entry's) and, with need_file, at least one regular file; with
// allow_old (a staging directory) also "old": an entry moved there to be deleted, or a
// symlink moved there (the link only). Else why it is not kiln's to delete.
std::string contents_problem(int fd, const std::string& shown, bool need_file, bool allow_old) {
  std::string why;
  const auto names = names_in(fd, why);
  if (!why.empty()) return shown + " cannot be listed: " + why;
  bool has_file = false;
  for (const auto& n : names) {
    struct stat st {};
    if (::fstatat(fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return shown + "/" + n + " cannot be examined: " + errno_text(errno);
    if (allow_old && n == "old") {
      if (S_ISLNK(st.st_mode)) continue;
      if (!S_ISDIR(st.st_mode)) return shown + "/old is not a directory kiln made";
      Fd sub;
      if (!(why = open_dir(fd, n, shown + "/old", sub)).empty()) return why;
      if (!(why = contents_problem(sub.get(), shown + "/old", false, false)).empty()) return why;
      continue;
    }
    if (!is_entry_file_name(n)) return shown + " holds '" + n + "', which kiln does not create";
    if (S_ISREG(st.st_mode)) {
      has_file = true;
      if (st.st_uid != ::geteuid()) return shown + "/" + n + " is owned by uid " + std::to_string(st.st_uid) + ", not by this user";
    } else if (S_ISDIR(st.st_mode)) {
      Fd sub;
      if (!(why = open_dir(fd, n, shown + "/" + n, sub)).empty()) return why;
      std::string w2;
      if (!names_in(sub.get(), w2).empty()) return shown + "/" + n + " is a directory that is not empty";
    } else if (S_ISLNK(st.st_mode) && st.st_uid == ::geteuid()) {
      // A link put in place of one of kiln's files (refused by every load): unlinkat
      // removes the link only, never what it points to, so the entry can be replaced.
    } else {
      return shown + "/" + n + " is " + (S_ISLNK(st.st_mode) ? "a symlink owned by uid " + std::to_string(st.st_uid) : "not a regular file") +
             " (kiln creates only regular files there)";
    }
  }
  if (need_file && !has_file) return shown + " holds none of kiln's files (step.so, meta.json)";
  return {};
}

// Deletes directory `name` under `parent` after contents_problem() found it kiln's: each
// name with unlinkat, then the directory. "" or why it (or part of it) is still there.
std::string delete_dir(int parent, const std::string& name, const std::string& shown, bool allow_old) {
  Fd fd;
  std::string why = open_dir(parent, name, shown, fd);
  if (why.empty()) why = contents_problem(fd.get(), shown, false, allow_old);
  if (!why.empty()) return why;
  const auto names = names_in(fd.get(), why);
  for (const auto& n : names) {
    struct stat st {};
    if (::fstatat(fd.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode) && n == "old" && allow_old) {
      why = delete_dir(fd.get(), n, shown + "/old", false);
      if (!why.empty()) return why;
    } else if (::unlinkat(fd.get(), n.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0) {
      return "cannot remove " + shown + "/" + n + ": " + errno_text(errno);
    }
  }
  if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0) return "cannot remove " + shown + ": " + errno_text(errno);
  return {};
}

std::string lock_refusal(const KeyLock& lock) {
  return lock.error().empty() ? "in use: another process holds its lock (compiling or storing it)" : lock.error();
}

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

void report(std::vector<Kept>* kept, std::string path, std::string reason, bool error = false) {
  if (kept) kept->push_back({std::move(path), std::move(reason), error});
}

}  // namespace

std::string Store::deletable() const {
  std::string why = unsafe_reason(root_, PathKind::directory);
  if (!why.empty()) return "the cache directory is refused: " + why;
  return marker_problem(root_);
}

std::string Store::entry_removal_problem(const std::string& key) const {
  const std::string prefix = key.substr(0, 2), shown_prefix = root_ + "/" + prefix;
  Fd root, pfx, entry;
  std::string why = open_dir(AT_FDCWD, root_, root_, root);
  if (why.empty()) why = open_dir(root.get(), prefix, shown_prefix, pfx);
  if (why.empty()) why = open_dir(pfx.get(), key, entry_dir(key), entry);
  if (why.empty()) why = contents_problem(entry.get(), entry_dir(key), true, false);
  return why;
}

bool Store::remove(const std::string& key, std::string* why) const {
  const auto fail = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  const std::string dir = entry_dir(key);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return fail(dir + " cannot be examined: " + errno_text(errno));
  if (!S_ISLNK(st.st_mode)) {
    std::string problem = entry_removal_problem(key);
    if (!problem.empty()) return fail(problem);
  }
  std::string reason;
  const std::string trash = make_staging(key, reason);
  if (trash.empty()) return fail(reason);
  if (::rename(dir.c_str(), (trash + "/old").c_str()) != 0) {
    const int err = errno;
    ::rmdir(trash.c_str());
    return fail("cannot remove " + dir + ": " + errno_text(err));
  }
  // The entry is out of the cache now; a staging directory that cannot be deleted is
  // retried (and reported) by clean_staging.
  Fd tmp;
  const std::string tmp_dir = root_ + "/" + kStagingDir;
  if (open_dir(AT_FDCWD, tmp_dir, tmp_dir, tmp).empty())
    delete_dir(tmp.get(), trash.substr(tmp_dir.size() + 1), trash, true);
  return true;
}

std::vector<std::string> Store::evict(int64_t cap_bytes, const std::string& keep, std::vector<Kept>* kept) const {
  std::vector<std::string> removed;
  std::vector<EntryInfo> entries = scan();
  int64_t total = 0;
  for (const auto& e : entries) total += e.bytes;
  if (total <= cap_bytes) return removed;
  const std::string refused = deletable();
  if (!refused.empty()) {
    report(kept, root_, refused + "; nothing evicted");
    return removed;
  }
  std::sort(entries.begin(), entries.end(), [](const EntryInfo& a, const EntryInfo& b) { return a.last_used < b.last_used; });
  for (const auto& e : entries) {
    if (total <= cap_bytes) break;
    if (e.key == keep) continue;
    const std::string problem = entry_removal_problem(e.key);
    if (!problem.empty()) {
      report(kept, e.dir, problem);
      continue;
    }
    KeyLock lock(lock_path(e.key));
    if (!lock.try_acquire()) {
      report(kept, e.dir, lock_refusal(lock), !lock.error().empty());
      continue;
    }
    std::string why;
    if (remove(e.key, &why)) {
      total -= e.bytes;
      removed.push_back(e.key);
    } else {
      report(kept, e.dir, why, true);
    }
  }
  return removed;
}

int64_t Store::clean_staging(double max_age_seconds, std::vector<Kept>* kept) const {
  const std::string tmp_dir = root_ + "/" + kStagingDir;
  struct stat st {};
  if (::lstat(tmp_dir.c_str(), &st) != 0) return 0;  // no store has run here yet
  const std::string refused = deletable();
  if (!refused.empty()) {
    report(kept, tmp_dir, refused);
    return 0;
  }
  Fd tmp;
  std::string why = open_dir(AT_FDCWD, tmp_dir, tmp_dir, tmp);
  if (!why.empty()) {
    report(kept, tmp_dir, why);
    return 0;
  }
  const auto names = names_in(tmp.get(), why);
  if (!why.empty()) report(kept, tmp_dir, "cannot be listed: " + why, true);
  const double now = static_cast<double>(std::time(nullptr));
  int64_t n = 0;
  for (const auto& name : names) {
    const std::string shown = tmp_dir + "/" + name;
    pid_t pid = 0;
    if (!parse_staging_name(name, pid)) {
      report(kept, shown, "not a name kiln creates");
      continue;
    }
    if (::fstatat(tmp.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    if (!S_ISDIR(st.st_mode)) {
      report(kept, shown, S_ISLNK(st.st_mode) ? "a symlink (kiln never deletes through links)" : "not a directory kiln made");
      continue;
    }
    const double age = now - static_cast<double>(st.st_mtime);
    if (pid == 0 ? age < max_age_seconds : process_alive(pid) && age < kLiveStagingMaxAge) {
      if (pid != 0)
        report(kept, shown, pid == ::getpid() ? "left by this process: a removal that did not finish"
                                              : "in use: process " + std::to_string(pid) + " is storing or removing an entry");
      continue;
    }
    why = delete_dir(tmp.get(), name, shown, true);
    if (why.empty()) {
      ++n;
    } else {
      report(kept, shown, why, why.rfind("cannot remove", 0) == 0);
    }
  }
  return n;
}

Removal Store::clear() const {
  Removal r;
  std::string why = deletable();
  if (!why.empty()) {
    report(&r.kept, root_, why + "; nothing deleted");
    return r;
  }
  Fd root;
  why = open_dir(AT_FDCWD, root_, root_, root);
  const auto names = why.empty() ? names_in(root.get(), why) : std::vector<std::string>{};
  if (!why.empty()) {
    report(&r.kept, root_, why, true);
    return r;
  }
  for (const auto& prefix : names) {
    const std::string shown = root_ + "/" + prefix;
    if (is_marker_name(prefix) || prefix == kStagingDir) continue;
    if (!is_prefix_name(prefix)) {
      report(&r.kept, shown, "not a name kiln creates");
      continue;
    }
    Fd pfx;
    if (!(why = open_dir(root.get(), prefix, shown, pfx)).empty()) {
      report(&r.kept, shown, why);
      continue;
    }
    const auto keys = names_in(pfx.get(), why);
    if (!why.empty()) report(&r.kept, shown, "cannot be listed: " + why, true);
    for (const auto& key : keys) {
      const std::string entry = shown + "/" + key;
      if (is_lock_name(prefix, key)) continue;  // lock files stay: see lock.h
      if (!is_entry_name(prefix, key)) {
        report(&r.kept, entry, "not a name kiln creates");
        continue;
      }
      const std::string problem = entry_removal_problem(key);
      if (!problem.empty()) {
        report(&r.kept, entry, problem);
        continue;
      }
      KeyLock lock(lock_path(key));
      if (!lock.try_acquire()) {
        report(&r.kept, entry, lock_refusal(lock), !lock.error().empty());
        continue;
      }
      if (remove(key, &why))
        r.removed.push_back(key);
      else
        report(&r.kept, entry, why, true);
    }
  }
  r.staging_removed = clean_staging(0, &r.kept);
  return r;
}

}  // namespace kiln::cache
