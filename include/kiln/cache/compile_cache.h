// The persistent compile cache, as a user manages it (`kiln cache`). Compiles use it
// through CompileOptions::cache_dir (kiln/backend/compiler.h); this API inspects and trims it.
//
// An entry is one compiled graph: the shared object plus JSON metadata (the key's
// ingredients, kiln version, compile seconds by stage, sizes, an XXH3-128 checksum of the
// object, created and last-used times, hits) under <dir>/<first two hex digits>/<key>/.
//
// prune and clear delete only what kiln can prove is its own: in a directory that carries
// kiln's marker (<dir>/.kiln-cache, written when a compile first uses the directory) and
// passes the checks a compile applies before loading (not a symlink, owned by this user,
// not writable by group or others); only entries and staging directories kiln names and
// fills; never through a symlink. Everything else is kept and reported with the reason.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

struct CacheEntry {
  std::string key;             // 32 hex digits
  std::string dir;
  int64_t bytes = 0;           // on disk
  double created = 0;          // unix seconds (0 if the metadata is unreadable)
  double last_used = 0;
  int64_t hits = 0;
  double compile_seconds = 0;  // codegen + C++ compile when it was stored: saved per hit
  std::string precision;       // the precision policy it was compiled for
  int64_t graph_nodes = 0;
  std::string problem;         // verify(): why it would not be loaded; "" if fine
};

// Something prune or clear left alone. error: it is kiln's, but removing it failed.
struct CacheKept {
  std::string path;
  std::string reason;
  bool error = false;
};

struct CacheRemoval {
  std::vector<std::string> removed;  // keys of the entries removed
  int64_t staging_removed = 0;       // leftovers of interrupted stores removed
  std::vector<CacheKept> kept;
  bool failed() const {
    for (const auto& k : kept)
      if (k.error) return true;
    return false;
  }
};

struct CacheStats {
  int64_t entries = 0;
  int64_t bytes = 0;
  int64_t hits = 0;             // loads of the current entries
  int64_t stores = 0;           // compiles stored (one per miss), counting current entries
  double seconds_saved = 0;     // sum of hits x compile_seconds
};

// The remote tier (CacheSettings::remote_url, cache/remote/remote.h), for `kiln cache ...
// --remote`: only kiln's entries ("kiln:entry:<key>"), each checked against the key file
// as a compile checks it. ConfigError for a bad address or key file, SystemError when the
// server cannot be reached.
class RemoteCompileCache {
 public:
  RemoteCompileCache(std::string url, std::string key_file);
  struct Entry {
    std::string key;
    int64_t bytes = 0;
    std::string problem;  // why a compile would refuse it ("" = a good entry)
  };
  std::vector<Entry> entries() const;
  // Removes kiln's entries: every one (clear), or the ones a compile would refuse (prune).
  // Returns the keys removed.
  std::vector<std::string> remove(bool only_refused) const;
  const std::string& url() const { return url_; }

 private:
  std::string url_, key_file_;
};

class CompileCache {
 public:
  // Does not create the directory. ConfigError if it does not exist or is not a directory.
  explicit CompileCache(std::string dir);

  std::vector<CacheEntry> list() const;  // least recently used first
  CacheStats stats() const;
  // Every entry, with problem set for the ones a compile would refuse (checksum, size,
  // metadata, ownership, permissions, symlinks). The directory itself is checked too:
  // its problem, if any, is returned in directory_problem.
  std::vector<CacheEntry> verify(std::string* directory_problem = nullptr) const;
  // Evicts least-recently-used entries until the total is at most max_bytes, and removes
  // leftovers of interrupted stores (of processes that are gone, or older than an hour).
  // ConfigError, deleting nothing, if the directory is not kiln's (see above).
  CacheRemoval prune(int64_t max_bytes) const;
  // Removes every entry and leftover that is kiln's and not in use by another process.
  // ConfigError, deleting nothing, if the directory is not kiln's (see above).
  CacheRemoval clear() const;

 private:
  std::string dir_;
};

}  // namespace kiln
