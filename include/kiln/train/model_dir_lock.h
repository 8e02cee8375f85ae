// The exclusive lock of a model_dir for a training run: two runs writing checkpoints into
// one directory would interleave them and delete each other's half-written files.
//
// The lock is flock() on the model directory itself (which deleting a file cannot undo)
// and on <model_dir>/.kiln-lock (for runs on other hosts over NFS), which records the holder
// (pid, host, start time) for the message the next run gets and says what it is. The kernel
// releases both when the holder exits, however it exits (kill -9 included); the holder
// removes the file when it releases the lock, so only a killed run leaves one, harmless
// (its "about" says so). It excludes within one process exactly as between processes: a second
// acquire of a directory this process holds (another Estimator's train(), on another
// thread or while the first Estimator's lock is alive) is refused. A holder that wants
// its Estimator to train under its lock hands the lock over
// (EstimatorOptions::model_dir_lock: `kiln train` holds it for the whole run, training,
// evaluations and report). Reading checkpoints (evaluate, predict) takes no lock.
#pragma once
#include <sys/types.h>

#include <memory>
#include <string>

namespace kiln {

inline constexpr const char* kModelDirLockFile = ".kiln-lock";

class ModelDirLock {
 public:
  // Creates `dir` if needed and takes its lock, or throws CheckpointError:
  // "[model_dir] '<dir>' is in use by another training run (pid N on host H since T) ...",
  // (of this process: "... by another training run in this process"), or that the
  // directory or its lock file cannot be created. Never waits.
  static std::shared_ptr<ModelDirLock> acquire(const std::string& dir);

  // Whether this lock is `dir`'s (however it is spelled).
  bool covers(const std::string& dir) const;

  ~ModelDirLock();
  ModelDirLock(const ModelDirLock&) = delete;
  ModelDirLock& operator=(const ModelDirLock&) = delete;

  const std::string& dir() const { return dir_; }

  // The holder recorded in `dir`'s lock file ("pid N on host H since T"), or "" if none
  // can be read. For messages only: whether the lock is held is up to flock.
  static std::string recorded_holder(const std::string& dir);

 private:
  ModelDirLock(std::string dir, int dir_fd, int fd, dev_t dev, ino_t ino)
      : dir_(std::move(dir)), dir_fd_(dir_fd), fd_(fd), dev_(dev), ino_(ino) {}
  std::string dir_;
  int dir_fd_;  // flocked: the directory
  int fd_;      // flocked: its lock file
  dev_t dev_;
  ino_t ino_;
};

}  // namespace kiln
