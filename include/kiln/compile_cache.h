// The persistent compile cache, as a user manages it (`kiln cache`). Compiles use it
// through CompileOptions::cache_dir (kiln/compiler.h); this API inspects and trims it.
//
// An entry is one compiled graph: the shared object plus JSON metadata (the key's
// ingredients, kiln version, compile seconds by stage, sizes, an XXH3-128 checksum of the
// object, created and last-used times, hits) under <dir>/<first two hex digits>/<key>/.
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

struct CacheStats {
  int64_t entries = 0;
  int64_t bytes = 0;
  int64_t hits = 0;             // loads of the current entries
  int64_t stores = 0;           // compiles stored (one per miss), counting current entries
  double seconds_saved = 0;     // sum of hits x compile_seconds
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
  // leftovers of interrupted stores. Returns the keys evicted.
  std::vector<std::string> prune(int64_t max_bytes) const;
  // Removes every entry; returns how many.
  int64_t clear() const;

 private:
  std::string dir_;
};

}  // namespace kiln
