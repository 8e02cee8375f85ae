// Checkpoints: the whole training state (every variable, including optimizer slots and
// global_step), in TensorFlow's format in a model_dir (CheckpointDir), with atomic writes,
// retention and "latest". Below, kiln's older single-file format, still read:
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
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/base/error.h"
#include "kiln/ir/graph.h"
#include "kiln/train/model_dir_lock.h"
#include "kiln/backend/runtime.h"

namespace kiln {

struct Checkpoint {
  int64_t step = 0;
  Variables variables;
  nlohmann::json state = nlohmann::json::object();  // e.g. {"phase": "original"}
  // Tensors of a TensorFlow checkpoint in a dtype kiln does not hold (name -> TensorFlow's
  // dtype name, "DT_DOUBLE"): not read, named when the model has a variable of that name.
  std::map<std::string, std::string> unread;
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
std::vector<std::string> checkpoint_mismatches(const Graph& g, const Variables& saved, bool allow_extra = false,
                                               const std::map<std::string, std::string>& unread = {});

// A checkpoint in TensorFlow's format (a tensor bundle, formats/tensor_bundle.h) at
// `prefix` ("dir/model.ckpt-N"), with kiln's own state beside it in
// "<prefix>.kiln-state.json" (phase, loss scaler, run settings; absent from a checkpoint
// TensorFlow wrote, which then resumes in the original precision). Local variables are not
// saved. The bundle is written data first and index last, each atomically.
void write_tf_checkpoint(const std::string& prefix, const Checkpoint& ckpt);
// Reads one: the bundle's variables (CRC-checked), the state, and checks that a
// global_step variable, if any, equals the state's step. CheckpointError naming the file.
Checkpoint read_tf_checkpoint(const std::string& prefix);
// A checkpoint by its path: a TensorFlow prefix (what tf.train.latest_checkpoint gives) or
// one of kiln's older single files (".kiln").
Checkpoint load_checkpoint(const std::string& path);

// The checkpoints of one model_dir, named as TensorFlow names them: model.ckpt-N.index,
// model.ckpt-N.data-00000-of-00001 and the `checkpoint` state file (relative paths, as
// Estimator writes it), so tf.train.latest_checkpoint, evaluate(checkpoint_path=) and
// scripts that glob for them find them; kiln's older "ckpt-N.kiln" files are still read
// (a resume from one says so; new checkpoints are TensorFlow's).
class CheckpointDir {
 public:
  // keep: how many to keep (oldest deleted first); 0 = all.
  CheckpointDir(std::string dir, int64_t keep);

  // Creates the directory if needed, takes its lock for as long as this object (or a copy)
  // lives, and checks that a file can be created in it. CheckpointError "[model_dir] '<dir>'
  // is not writable: ..." or "... is in use by another training run (pid ...)" otherwise.
  // Then, as the lock's owner, removes what a killed save or rotation left of a checkpoint
  // whose index is absent (model.ckpt-N.kiln-state.json, model.ckpt-N.data-*).
  // `held`: a lock the caller holds; used when it is this directory's (no second acquire).
  void prepare(std::shared_ptr<ModelDirLock> held = nullptr);
  // Steps of the complete checkpoints present (either format), ascending.
  std::vector<int64_t> steps() const;
  std::optional<int64_t> latest_step() const;
  // The checkpoint of a step: its TensorFlow prefix, or the older file when only that exists.
  std::string path_for(int64_t step) const;
  // "<dir>/model.ckpt-N": where a save of step N goes.
  std::string prefix_for(int64_t step) const;
  // The newest checkpoint, verified; nullopt when there is none. A corrupt newest one, or
  // anything under a checkpoint's name that is not a regular file (a directory, a FIFO, a
  // link to a device), is a CheckpointError (never silently skipped: a user should know
  // their state is damaged).
  std::optional<Checkpoint> load_latest() const;
  // Saves (TensorFlow's format), rewrites the `checkpoint` state file, then deletes the
  // oldest beyond `keep` (their every file) and, when prepare() took the lock, the
  // temporary files of processes that are gone (.tmp-<pid>-... whose pid does not exist).
  void save(const Checkpoint& ckpt) const;

  const std::string& dir() const { return dir_; }

 private:
  void remove_orphans() const;

  std::string dir_;
  int64_t keep_;
  std::shared_ptr<ModelDirLock> lock_;  // set by prepare()
};

// tf.train.latest_checkpoint: the prefix the `checkpoint` state file names (relative paths
// taken from `dir`), when its index exists; else the newest kiln finds; nullopt if none.
std::optional<std::string> latest_checkpoint_path(const std::string& dir);

}  // namespace kiln
