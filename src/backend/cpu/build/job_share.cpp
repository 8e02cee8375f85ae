#include "backend/cpu/build/job_share.h"
#include "kiln/base/settings.h"

#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <exception>
#include <filesystem>

#include "backend/cpu/build/cache_entry.h"
#include "cache/key.h"
#include "kiln/base/error.h"
#include "kiln/dist/world.h"

namespace kiln::cpu {
namespace {

constexpr size_t kKeyChars = 32;  // a cache key and an XXH3-128 checksum: 32 hex digits

// Rank 0's text of kKeyChars characters, on every rank.
std::string from_rank0(const std::string& mine) {
  std::array<char, kKeyChars> buf{};
  std::memcpy(buf.data(), mine.data(), std::min(mine.size(), buf.size()));
  World::get().broadcast(buf.data(), static_cast<int64_t>(buf.size()));
  return std::string(buf.data(), buf.size());
}

// The sum over the ranks of each rank's `mine`.
double sum_over_ranks(double mine) {
  World::get().all_reduce_sum(&mine, 1);
  return mine;
}

// A private file (0600, mkstemp) holding `bytes`, removed when this goes.
class PrivateFile {
 public:
  explicit PrivateFile(const std::string& bytes) {
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
    path_ = ((ec ? std::filesystem::path("/tmp") : dir) / "kiln-job-object-XXXXXX").string();
    const int fd = ::mkstemp(path_.data());
    if (fd < 0) KILN_THROW(SystemError) << "[compile] cannot create a file for the object rank 0 sent in " << dir
                                        << ": " << std::strerror(errno) << "; set TMPDIR to a writable directory";
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = errno;
        ::close(fd);
        ::unlink(path_.c_str());
        KILN_THROW(SystemError) << "[compile] cannot write the object rank 0 sent to " << path_ << ": "
                                << std::strerror(err);
      }
      done += static_cast<size_t>(n);
    }
    ::close(fd);
  }
  ~PrivateFile() { ::unlink(path_.c_str()); }
  PrivateFile(const PrivateFile&) = delete;
  PrivateFile& operator=(const PrivateFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Rank 0's object, or the exception its build ended in.
struct RootObject {
  std::unique_ptr<SharedObject> object;
  std::string bytes;
  std::exception_ptr failed;
};

RootObject obtain_on_root(const ObtainObject& obtain) {
  RootObject r;
  try {
    r.object = obtain(r.bytes);
  } catch (...) {
    r.failed = std::current_exception();
    r.bytes.clear();
  }
  return r;
}

// A receiver's object from rank 0's bytes: checked, loaded, stored in its cache.
std::unique_ptr<SharedObject> load_received(const std::string& bytes, const std::string& checksum,
                                            const std::string& identity, cache::Session* cache,
                                            const std::function<nlohmann::json()>& meta) {
  if (cache::hash_hex(bytes) != checksum)
    KILN_THROW(SystemError) << "[compile] " << World::get().prefix() << "the object rank 0 sent ("
                            << bytes.size() << " bytes) does not match its checksum";
  const PrivateFile file(bytes);
  auto object = std::make_unique<SharedObject>(file.path(), identity);
  // Keeping a copy is a convenience: a cache that cannot store it costs this object nothing.
  if (cache && cache->usable()) {
    try {
      cache->publish(file.path(), meta());
    } catch (const std::exception& e) {
      cache::warn_once(std::string("[compile] the object rank 0 sent was loaded but not stored in the cache: ") +
                       e.what());
    }
  }
  return object;
}

}  // namespace

std::unique_ptr<SharedObject> object_for_job(const std::string& key, const std::string& identity,
                                             cache::Session* cache, CompileReport& report, const ObtainObject& obtain,
                                             const std::function<nlohmann::json()>& meta) {
  World& world = World::get();
  const bool root = world.rank() == 0;
  std::string unused;
  if (sum_over_ranks(from_rank0(key) == key ? 0 : 1) > 0) return obtain(unused);  // other graphs: each its own

  RootObject mine = root ? obtain_on_root(obtain) : RootObject{};
  // No rank holds a cache key lock in a collective: a process sharing the directory would
  // wait for it (up to the lock timeout) while this one waits for that process's rank.
  if (cache) cache->unlock();
  int64_t size = root ? (mine.failed ? -1 : static_cast<int64_t>(mine.bytes.size())) : 0;
  world.broadcast(&size, sizeof size);
  if (size < 0) {
    if (mine.failed) std::rethrow_exception(mine.failed);
    KILN_THROW(SystemError) << "[compile] " << world.prefix() << "rank 0 could not build this graph (key " << key
                            << "), so no rank runs it compiled";
  }

  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<SharedObject> object = std::move(mine.object);
  if (!root && cache) {
    object = load_cached(*cache, identity, report);  // rank 0's entry, if the directory is shared
    cache->unlock();
  }
  if (sum_over_ranks(object ? 0 : 1) == 0) return object;

  const std::string checksum = from_rank0(root ? cache::hash_hex(mine.bytes) : std::string());
  std::string bytes = root ? std::move(mine.bytes) : std::string(static_cast<size_t>(size), '\0');
  world.broadcast(bytes.data(), size);
  // For tests: a byte damaged on the way (KILN_JOB_OBJECT_FAILPOINT=corrupt on a receiver).
  if (!object && setting_value("KILN_JOB_OBJECT_FAILPOINT") == "corrupt" && size > 0)
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x10);
  std::exception_ptr failed;
  if (!object) {  // rank 0, and ranks whose cache had it, only took part
    try {
      object = load_received(bytes, checksum, identity, cache, meta);
      report.received = true;
      report.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } catch (const std::exception& e) {
      failed = std::make_exception_ptr(SystemError(std::string(e.what())));
    }
  }
  // A rank running this graph on the interpreter while the others run it compiled would
  // pair its all-reduce buckets with theirs in another order (another graph form): if one
  // rank cannot load the object, every rank runs the graph on the interpreter.
  const double failures = sum_over_ranks(failed ? 1 : 0);
  if (failed) std::rethrow_exception(failed);
  if (failures > 0)
    KILN_THROW(SystemError) << "[compile] " << world.prefix() << "another rank could not load this graph's object (key "
                            << key << "), so no rank runs it compiled: their all-reduces must match";
  return object;
}

}  // namespace kiln::cpu
