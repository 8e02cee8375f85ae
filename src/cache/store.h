// The cache's files. Layout under the root (every name is listed in layout.h):
//   <root>/.kiln-cache               the marker: this directory is kiln's cache
//   <root>/<k0k1>/<key>/step.so      the shared object
//   <root>/<k0k1>/<key>/meta.json    key ingredients, sizes, checksum, times, hits
//   <root>/<k0k1>/<key>.lock         the per-key flock (see lock.h)
//   <root>/tmp/                      private staging directories of stores in progress
// An entry appears only by rename() of a complete, fsynced staging directory, so a
// process killed at any moment leaves at most a staging directory, never a loadable entry.
//
// Deleting (store_removal.cpp) follows one rule: kiln deletes only what it can prove is its
// own. Only under a root that is safe (safety.h) and carries the marker; only names kiln
// creates, holding only files kiln creates; never through a symlink (directories are
// opened with O_NOFOLLOW and emptied file by file, never removed recursively); and what
// it leaves alone is reported with the reason.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/cache/compile_cache.h"

namespace kiln::cache {

inline constexpr const char* kObjectFile = "step.so";
inline constexpr const char* kMetaFile = "meta.json";

struct EntryCheck {
  enum class State { absent, ok, bad } state = State::absent;
  std::string reason;   // for bad: why it must not be loaded
  bool ours = false;    // for bad: this user may remove it (and store a new one)
  nlohmann::json meta;  // for ok
};

// What a deletion removed and left alone: the types `kiln cache` reports (compile_cache.h).
using Kept = CacheKept;
using Removal = CacheRemoval;

struct EntryInfo {
  std::string key;
  std::string dir;
  int64_t bytes = 0;
  double last_used = 0;  // unix seconds (metadata, or the directory's mtime if unreadable)
  nlohmann::json meta;   // null if unreadable
};

class Store {
 public:
  // `root` must exist and be safe (prepare_cache_root).
  explicit Store(std::string root);

  const std::string& root() const { return root_; }
  std::string entry_dir(const std::string& key) const;
  std::string object_path(const std::string& key) const;
  std::string lock_path(const std::string& key) const;
  // Creates the key's prefix directory (0700) so its lock file can live there; "" or why not.
  std::string prepare_prefix(const std::string& key) const;

  // Checks ownership, permissions, symlinks, metadata and the object's size and checksum.
  EntryCheck check(const std::string& key) const;

  // Stores `object_file` under `key` with `meta` (sizes.object, checksum, created,
  // last_used and hits are filled in here), replacing an existing entry. "" or the reason
  // it failed (the cache directory is then left without a partial entry).
  std::string publish(const std::string& key, const std::string& object_file, nlohmann::json meta) const;

  // Records a hit: last_used = now, hits + 1 (best effort).
  void touch(const std::string& key, nlohmann::json meta) const;

  // Entries found under the prefix directories (symlinked prefixes are not entered).
  std::vector<EntryInfo> scan() const;
  int64_t total_bytes() const;

  // --- deleting (store_removal.cpp) ---

  // "" if kiln may delete in this root: a safe directory (unsafe_reason) with a valid
  // marker (layout.h); else why not.
  std::string deletable() const;
  // "" if the entry at `key` is kiln's to delete: a directory (not a link) owned by this
  // user, not writable by group or others, in such a prefix directory, holding only an
  // entry's files (step.so, meta.json, .meta.XXXXXX) and at least one of them.
  std::string entry_removal_problem(const std::string& key) const;

  // Removes the entry at `key` atomically (rename into a staging directory, then delete it
  // file by file); false (and why) if it could not or if it is not kiln's. A symlink at the
  // key (which check() refuses) is removed as a link: its target is never touched.
  bool remove(const std::string& key, std::string* why = nullptr) const;

  // Evicts least-recently-used entries (never `keep`, never one whose lock is held, never
  // one that is not kiln's to delete) until the total is at most cap_bytes. Returns the
  // keys removed; what it would have evicted but could not goes to `kept`.
  std::vector<std::string> evict(int64_t cap_bytes, const std::string& keep = {}, std::vector<Kept>* kept = nullptr) const;

  // Removes staging directories left by processes that died (their pid, in the name, is
  // gone) and old-style ones older than max_age_seconds. Returns how many.
  int64_t clean_staging(double max_age_seconds, std::vector<Kept>* kept = nullptr) const;

  // Removes every entry and leftover staging directory that is kiln's; everything else in
  // the root (and every entry in use) is kept and reported.
  Removal clear() const;

 private:
  // A new staging directory under <root>/tmp (created 0700 if missing): its path, or ""
  // and why not.
  std::string make_staging(const std::string& key, std::string& why) const;

  std::string root_;
};

double unix_now();

}  // namespace kiln::cache
