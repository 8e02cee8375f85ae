// kiln/cache/compile_cache.h: the management view of the cache, on top of cache::Store.
#include "kiln/cache/compile_cache.h"

#include <algorithm>
#include <filesystem>

#include "cache/entry_meta.h"
#include "cache/safety.h"
#include "cache/store.h"
#include "kiln/base/error.h"

namespace kiln {
namespace {

CacheEntry entry_of(const cache::EntryInfo& e) {
  CacheEntry c;
  c.key = e.key;
  c.dir = e.dir;
  c.bytes = e.bytes;
  c.last_used = e.last_used;
  if (!e.meta.is_object()) return c;
  const cache::EntryMeta m = cache::entry_meta_of(e.meta, e.key, e.dir);
  c.created = m.created.value_or(0);
  c.hits = m.hits;
  c.compile_seconds = m.compile_seconds;
  c.precision = m.precision;
  c.graph_nodes = m.graph_nodes;
  return c;
}

}  // namespace

CompileCache::CompileCache(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir_, ec))
    KILN_THROW(ConfigError) << "[cache] '" << dir_ << "' is not a cache directory (it does not exist or is not a directory)";
}

std::vector<CacheEntry> CompileCache::list() const {
  std::vector<CacheEntry> out;
  for (const auto& e : cache::Store(dir_).scan()) out.push_back(entry_of(e));
  std::stable_sort(out.begin(), out.end(), [](const CacheEntry& a, const CacheEntry& b) { return a.last_used < b.last_used; });
  return out;
}

CacheStats CompileCache::stats() const {
  CacheStats s;
  for (const auto& e : list()) {
    ++s.entries;
    s.bytes += e.bytes;
    s.hits += e.hits;
    ++s.stores;
    s.seconds_saved += static_cast<double>(e.hits) * e.compile_seconds;
  }
  return s;
}

std::vector<CacheEntry> CompileCache::verify(std::string* directory_problem) const {
  if (directory_problem) *directory_problem = cache::unsafe_reason(dir_, cache::PathKind::directory);
  const cache::Store store(dir_);
  std::vector<CacheEntry> out = list();
  for (auto& e : out) {
    const cache::EntryCheck c = store.check(e.key);
    if (c.state != cache::EntryCheck::State::ok) e.problem = c.reason.empty() ? "vanished while checking" : c.reason;
  }
  return out;
}

namespace {

// Deleting needs a directory that is provably kiln's cache; say why not, and that nothing
// was touched.
cache::Store deleting_store(const std::string& dir, const char* action) {
  cache::Store store(dir);
  const std::string why = store.deletable();
  if (!why.empty())
    KILN_THROW(ConfigError) << "[cache] " << action << " refused, nothing deleted: " << why
                            << ". kiln deletes only in a directory it made its cache (a compile with "
                               "--graph-compiler-cache-dir marks it, and adopts a cache of an older kiln)";
  return store;
}

}  // namespace

CacheRemoval CompileCache::prune(int64_t max_bytes) const {
  const cache::Store store = deleting_store(dir_, "prune");
  CacheRemoval r;
  r.removed = store.evict(max_bytes, {}, &r.kept);
  r.staging_removed = store.clean_staging(3600, &r.kept);
  return r;
}

CacheRemoval CompileCache::clear() const { return deleting_store(dir_, "clear").clear(); }

}  // namespace kiln
