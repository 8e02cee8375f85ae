// The model_dir lock: flock on <model_dir>/.kiln-lock, exclusive within the process too.
#include "json/bounded_json.h"
#include "kiln/model_dir_lock.h"

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

#include <nlohmann/json.hpp>

#include "kiln/checkpoint.h"

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

// Replaces the lock file's contents with this process's description; 0 or an errno.
int record_holder(int fd) {
  const std::string text =
      nlohmann::json{{"pid", ::getpid()}, {"host", host_name()}, {"since", utc_now()}, {"kiln", KILN_VERSION}}.dump() + "\n";
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
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    const int err = errno;
    KILN_THROW(CheckpointError) << "[model_dir] '" << dir << "' cannot be locked for this run: cannot open '" << path
                                << "': " << (err == ELOOP ? "it is a symlink" : std::strerror(err))
                                << (err == EACCES || err == EROFS ? " (the directory is not writable)" : "");
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err != EWOULDBLOCK) {
      ::close(fd);
      KILN_THROW(CheckpointError) << "[model_dir] cannot lock '" << path << "': " << std::strerror(err);
    }
    // The holder writes its description right after locking: give it a moment.
    std::string holder;
    for (int i = 0; i < 25 && (holder = recorded_holder(dir)).empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ::close(fd);
    KILN_THROW(CheckpointError) << "[model_dir] '" << dir << "' is in use by another training run ("
                                << (holder.empty() ? "holder unknown" : holder) << "; lock file " << path
                                << "): two runs in one model directory would overwrite each other's checkpoints. "
                                   "Wait for it to finish, or give this run another model directory";
  }
  if (const int err = record_holder(fd)) {
    ::close(fd);
    KILN_THROW(CheckpointError) << "[model_dir] cannot write '" << path << "': " << std::strerror(err);
  }
  std::shared_ptr<ModelDirLock> lock(new ModelDirLock(dir, fd, st.st_dev, st.st_ino));
  g_held[id] = lock;
  return lock;
}

bool ModelDirLock::covers(const std::string& dir) const {
  struct stat st {};
  return ::stat(dir.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
}

ModelDirLock::~ModelDirLock() {
  std::lock_guard<std::mutex> g(g_mu);
  ::close(fd_);  // releases the flock
}

}  // namespace kiln
