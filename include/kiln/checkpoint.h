// Checkpoints: the whole training state (every variable, including optimizer slots and
// global_step) in one self-checking file, plus a directory of them with atomic writes,
// retention and "latest".
//
// File format (little-endian), version 1:
//   "KILNCKPT"  u32 version  u64 manifest_bytes  manifest (JSON)  tensor data  XXH3-128
// The manifest lists each variable (name, dtype, shape, offset, bytes), the global step
// and free-form `state` (the run's mode and phase, for the precision switch). The last 16
// bytes are XXH3-128 of everything before them: a truncated or damaged file is detected
// before any of it is used.
//
// In a model_dir, checkpoint N is "ckpt-<N zero-padded to 12>.kiln". A save writes
// ".tmp-<pid>-ckpt-...", fsyncs it, renames it into place and fsyncs the directory, so a
// reader (or a run killed with SIGKILL at any moment) sees either the complete file or
// none. Stray temporary files are ignored; a save removes only those of processes that
// are gone, and only while it holds the directory's lock (model_dir_lock.h), so no run
// ever deletes another live run's half-written checkpoint.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/error.h"
#include "kiln/graph.h"
#include "kiln/model_dir_lock.h"
#include "kiln/runtime.h"

namespace kiln {

// A checkpoint or model_dir that cannot be used: corrupt, from another model, not
// writable. A user-input problem: `kiln train` exits with status 2.
class CheckpointError : public Error {
 public:
  using Error::Error;
};

struct Checkpoint {
  int64_t step = 0;
  Variables variables;
  nlohmann::json state = nlohmann::json::object();  // e.g. {"phase": "original"}
};

// Writes `ckpt` to `path` atomically (temp file in the same directory, fsync, rename,
// fsync of the directory). SystemError naming the path if any of it fails; the previous
// file at `path`, if any, is then untouched.
void write_checkpoint(const std::string& path, const Checkpoint& ckpt);

// Reads and verifies a checkpoint file. CheckpointError "[checkpoint] '<path>' ..." for a
// missing, truncated or corrupt file (checksum mismatch, bad header or manifest), and for
// anything but a regular file (a directory, a FIFO, a device: never read, never waited on).
Checkpoint read_checkpoint(const std::string& path);

// The checks of read_checkpoint on bytes already read; `path` names them in errors. Every
// manifest field is checked for its type and every size against the bytes present before
// anything is allocated (a checksum proves integrity, not that a person wrote sense), and
// the manifest's global_step must equal the variable 'global_step' when there is one.
Checkpoint parse_checkpoint(std::string_view bytes, const std::string& path);

// The variables of `g` compared with a checkpoint's: every mismatch (missing, unexpected,
// other dtype or shape), one per entry; empty when they match. With allow_extra,
// variables only in the checkpoint are fine (an evaluation graph has no optimizer slots).
std::vector<std::string> checkpoint_mismatches(const Graph& g, const Variables& saved, bool allow_extra = false);

// The checkpoints of one model_dir.
class CheckpointDir {
 public:
  // keep: how many to keep (oldest deleted first); 0 = all.
  CheckpointDir(std::string dir, int64_t keep);

  // Creates the directory if needed, takes its lock for as long as this object (or a copy)
  // lives, and checks that a file can be created in it. CheckpointError "[model_dir] '<dir>'
  // is not writable: ..." or "... is in use by another training run (pid ...)" otherwise.
  // `held`: a lock the caller holds; used when it is this directory's (no second acquire).
  void prepare(std::shared_ptr<ModelDirLock> held = nullptr);
  // Steps of the complete checkpoints present, ascending.
  std::vector<int64_t> steps() const;
  std::optional<int64_t> latest_step() const;
  std::string path_for(int64_t step) const;
  // The newest checkpoint, verified; nullopt when there is none. A corrupt newest file, or
  // anything under a checkpoint's name that is not a regular file (a directory, a FIFO, a
  // link to a device), is a CheckpointError (never silently skipped: a user should know
  // their state is damaged).
  std::optional<Checkpoint> load_latest() const;
  // Saves, then deletes the oldest beyond `keep` and, when prepare() took the lock, the
  // temporary files of processes that are gone (.tmp-<pid>-... whose pid does not exist).
  void save(const Checkpoint& ckpt) const;

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  int64_t keep_;
  std::shared_ptr<ModelDirLock> lock_;  // set by prepare()
};

}  // namespace kiln
