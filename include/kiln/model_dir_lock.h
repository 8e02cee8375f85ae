// The exclusive lock of a model_dir for a training run: two runs writing checkpoints into
// one directory would interleave them and delete each other's half-written files.
//
// The lock is flock() on <model_dir>/.kiln-lock, which records the holder (pid, host,
// start time) for the message the next run gets. The kernel releases it when the holder
// exits, however it exits (kill -9 included), so a stale lock file is harmless and is
// never deleted. Within one process the lock is shared: acquiring a directory this
// process already holds returns the same lock (`kiln train` holds it for the whole run
// while Estimator::train takes it again for each call). Reading checkpoints (evaluate,
// predict) takes no lock.
#pragma once
#include <memory>
#include <string>

namespace kiln {

inline constexpr const char* kModelDirLockFile = ".kiln-lock";

class ModelDirLock {
 public:
  // Creates `dir` if needed and takes its lock, or throws CheckpointError:
  // "[model_dir] '<dir>' is in use by another training run (pid N on host H since T) ...",
  // or that the directory or its lock file cannot be created. Never waits.
  static std::shared_ptr<ModelDirLock> acquire(const std::string& dir);

  ~ModelDirLock();
  ModelDirLock(const ModelDirLock&) = delete;
  ModelDirLock& operator=(const ModelDirLock&) = delete;

  const std::string& dir() const { return dir_; }

  // The holder recorded in `dir`'s lock file ("pid N on host H since T"), or "" if none
  // can be read. For messages only: whether the lock is held is up to flock.
  static std::string recorded_holder(const std::string& dir);

 private:
  explicit ModelDirLock(std::string dir, int fd) : dir_(std::move(dir)), fd_(fd) {}
  std::string dir_;
  int fd_;
};

}  // namespace kiln
