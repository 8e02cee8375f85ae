// The model_dir lock: flock on the model directory itself and on <model_dir>/.kiln-lock,
// exclusive within the process too.
//
// Why two locks. A lock on the file alone was lost when the file was deleted while a run
// held it (a user tidying the directory, a script's `rm DIR/.*`): the next run created a new
// file, a new inode, and locked that one too, and both wrote checkpoints. A directory cannot
// be deleted while it holds checkpoints, so its flock cannot be sidestepped that way (only by
// removing the whole directory, whose checkpoints then are gone anyway and whose run's saves
// fail); it is the lock between runs of this machine. The file's flock stays because on NFS
// Linux keeps a directory's flock local to the client, while a file's goes to the server:
// it is what excludes a run on another host, and its content names the holder for the
// refusal's message. Acquiring it checks, after flock, that the path still names the inode
// it locked (the holder removes the file when it releases, so a waiter may have locked an
// unlinked inode) and starts over if not.
#include "formats/bounded_json.h"
#include "kiln/train/model_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "kiln/train/checkpoint.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

std::mutex g_mu;
// The locks this process holds, by the directory's device and inode (one directory may be
// spelled many ways).
std::map<std::pair<dev_t, ino_t>, std::weak_ptr<ModelDirLock>> g_held;

std::string lock_path(const std::string& dir) { return (fs::path(dir) / kModelDirLockFile).string(); }

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm {};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

// What the lock file says of itself, for a user who finds one (left by a killed run).
constexpr const char* kAbout =
    "kiln's lock of this model directory, naming the training run that holds it. It is held only while that "
    "process runs (flock on this directory and this file; the kernel releases it when the process exits, "
    "kill -9 included). A finished run removes this file; one left by a killed run is harmless and may be deleted.";

// Replaces the lock file's contents with this process's description; 0 or an errno.
int record_holder(int fd) {
  const std::string text = nlohmann::json{{"about", kAbout}, {"pid", ::getpid()}, {"host", host_name()},
                                          {"since", utc_now()}, {"kiln", KILN_VERSION}}
                               .dump() +
                           "\n";
  if (::ftruncate(fd, 0) != 0) return errno;
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// An open file, closed unless released.
struct OwnedFd {
  int fd = -1;
  ~OwnedFd() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

[[noreturn]] void refuse_in_use(const std::string& dir, const std::string& path) {
  // The holder writes its description right after locking: give it a moment.
  std::string holder;
  for (int i = 0; i < 25 && (holder = ModelDirLock::recorded_holder(dir)).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  KILN_THROW(CheckpointError) << "[model_dir] '" << dir << "' is in use by another training run ("
                              << (holder.empty() ? "holder unknown" : holder) << "; lock file " << path
                              << "): two runs in one model directory would overwrite each other's checkpoints. "
                                 "Wait for it to finish, or give this run another model directory";
}

// flock on the file at `path` (created if absent), once the path still names the inode
// locked (its holder may have removed it meanwhile: then it starts over). The descriptor,
// or -1 when another holds the lock.
int lock_file(const std::string& dir, const std::string& path) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    OwnedFd f{::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644)};
    if (f.fd < 0) {
      const int err = errno;
      KILN_THROW(CheckpointError) << "[model_dir] '" << dir << "' cannot be locked for this run: cannot open '" << path
                                  << "': " << (err == ELOOP ? "it is a symlink" : std::strerror(err))
                                  << (err == EACCES || err == EROFS ? " (the directory is not writable)" : "");
    }
    if (::flock(f.fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) return -1;
      KILN_THROW(CheckpointError) << "[model_dir] cannot lock '" << path << "': " << std::strerror(errno);
    }
    struct stat locked {}, named {};
    if (::fstat(f.fd, &locked) == 0 && ::lstat(path.c_str(), &named) == 0 && locked.st_dev == named.st_dev &&
        locked.st_ino == named.st_ino)
      return f.release();
    // Else an inode no longer at the path: locking it excludes nobody.
  }
  KILN_THROW(CheckpointError) << "[model_dir] cannot lock '" << path
                              << "': it was deleted or replaced each time it was locked";
}

}  // namespace

std::string ModelDirLock::recorded_holder(const std::string& dir) {
  const int fd = ::open(lock_path(dir).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[4096];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  const nlohmann::json j =
      parse_bounded_json(std::string_view(buf, n > 0 ? static_cast<size_t>(n) : 0), JsonLimits{sizeof buf, 8});
  if (!j.is_object() || !j.contains("pid") || !j["pid"].is_number_integer()) return {};
  std::string out = "pid " + std::to_string(j["pid"].get<int64_t>());
  if (j.contains("host") && j["host"].is_string()) out += " on host " + j["host"].get<std::string>();
  if (j.contains("since") && j["since"].is_string()) out += " since " + j["since"].get<std::string>();
  return out;
}

std::shared_ptr<ModelDirLock> ModelDirLock::acquire(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    KILN_THROW(CheckpointError) << "[model_dir] cannot create directory '" << dir
                                << "': " << (ec ? ec.message() : "a file of that name exists");
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    KILN_THROW(CheckpointError) << "[model_dir] cannot examine '" << dir << "': " << std::strerror(errno);
  const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
  std::lock_guard<std::mutex> g(g_mu);
  // flock would refuse a second open file of this process too, with no holder to name.
  if (g_held[id].lock())
    KILN_THROW(CheckpointError) << "[model_dir] '" << dir << "' is in use by another training run in this process "
                                << "(pid " << ::getpid() << ": another Estimator's train()): two runs in one model "
                                   "directory would overwrite each other's checkpoints. Let it finish, or give this "
                                   "Estimator another model directory";

  const std::string path = lock_path(dir);
  // The directory's lock: this machine's runs.
  OwnedFd dir_fd{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir_fd.fd < 0)
    KILN_THROW(CheckpointError) << "[model_dir] '" << dir << "' cannot be locked for this run: cannot open it: "
                                << std::strerror(errno);
  if (::flock(dir_fd.fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) refuse_in_use(dir, path);
    KILN_THROW(CheckpointError) << "[model_dir] cannot lock directory '" << dir << "': " << std::strerror(errno);
  }
  struct stat dst {};
  if (::fstat(dir_fd.fd, &dst) != 0 || dst.st_dev != st.st_dev || dst.st_ino != st.st_ino)
    KILN_THROW(CheckpointError) << "[model_dir] '" << dir << "' was replaced by another directory while being locked";
  // The file's lock: other hosts (see the top of this file).
  OwnedFd fd{lock_file(dir, path)};
  if (fd.fd < 0) refuse_in_use(dir, path);
  if (const int err = record_holder(fd.fd))
    KILN_THROW(CheckpointError) << "[model_dir] cannot write '" << path << "': " << std::strerror(err);
  std::shared_ptr<ModelDirLock> lock(new ModelDirLock(dir, dir_fd.release(), fd.release(), st.st_dev, st.st_ino));
  g_held[id] = lock;
  return lock;
}

bool ModelDirLock::covers(const std::string& dir) const {
  struct stat st {};
  return ::stat(dir.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
}

ModelDirLock::~ModelDirLock() {
  std::lock_guard<std::mutex> g(g_mu);
  // Removed while still locked, so that no finished run leaves a file that looks like a lock
  // (a waiter that opened it sees, after its flock, that the path no longer names it). Only
  // if the path is still this lock's file: never another's.
  struct stat locked {}, named {};
  const std::string path = lock_path(dir_);
  if (::fstat(fd_, &locked) == 0 && ::lstat(path.c_str(), &named) == 0 && locked.st_dev == named.st_dev &&
      locked.st_ino == named.st_ino)
    ::unlink(path.c_str());
  ::close(fd_);  // releases the flocks: the file's, then the directory's
  ::close(dir_fd_);
}

}  // namespace kiln
