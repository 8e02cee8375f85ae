// The cache's files. Layout under the root:
//   <root>/<k0k1>/<key>/step.so      the shared object
//   <root>/<k0k1>/<key>/meta.json    key ingredients, sizes, checksum, times, hits
//   <root>/<k0k1>/<key>.lock         the per-key flock (see lock.h)
//   <root>/tmp/                      private staging directories of stores in progress
// An entry appears only by rename() of a complete, fsynced staging directory, so a
// process killed at any moment leaves at most a staging directory, never a loadable entry.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kiln::cache {

inline constexpr const char* kObjectFile = "step.so";
inline constexpr const char* kMetaFile = "meta.json";

struct EntryCheck {
  enum class State { absent, ok, bad } state = State::absent;
  std::string reason;   // for bad: why it must not be loaded
  bool ours = false;    // for bad: this user may remove it (and store a new one)
  nlohmann::json meta;  // for ok
};

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

  // Removes an entry atomically (rename away, then delete); false if it could not.
  bool remove(const std::string& key) const;

  std::vector<EntryInfo> scan() const;
  int64_t total_bytes() const;

  // Evicts least-recently-used entries (never `keep`, never one whose lock is held) until
  // the total is at most cap_bytes. Returns the keys removed.
  std::vector<std::string> evict(int64_t cap_bytes, const std::string& keep = {}) const;

  // Removes staging directories older than max_age_seconds (left by killed processes).
  void clean_staging(double max_age_seconds) const;

 private:
  std::string root_;
};

double unix_now();

}  // namespace kiln::cache
