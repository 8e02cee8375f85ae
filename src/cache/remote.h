// The remote tier of the compile cache: a Redis server behind the local cache
// (CacheSettings::remote_url), shared by jobs and hosts. Lookup order: local, remote,
// compile; a compile publishes to both; a remote hit is stored locally through the local
// store's own checks before it is loaded.
//
// Entries are shared objects that get executed, so each is authenticated: its value is
//   "KILNRC1\n" | HMAC-SHA256 tag (32 bytes) | metadata length (8 bytes, little endian) |
//   metadata (JSON) | object
// with the tag over the cache key, the metadata and the object, under a key file only the
// user can read (read_hmac_key_file). A value whose tag does not verify — tampered with,
// written under another cache key (swapped), or written without the key — is never
// loaded: it is reported and the graph is compiled (and the remote entry replaced).
// Whoever can write to Redis cannot run code in a kiln job.
//
// A remote that is down or slow never fails or stalls a job: connecting and every command
// have short timeouts, and the first failure warns once and turns the remote off for the
// rest of the process.
#pragma once
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/cache_settings.h"

struct redisContext;

namespace kiln::cache {

struct RedisAddress {
  std::string host;
  int port = 6379;
  int db = 0;
};
// "redis://HOST:PORT[/DB]" (PORT and DB optional). ConfigError naming the option and what
// is valid for anything else.
RedisAddress parse_redis_url(const std::string& url);

// The HMAC key: a regular file (not a link) owned by this user, readable by nobody else
// (no group or other permission bits: 0600 or 0400), 16 bytes to 64 KiB. ConfigError
// "[graph_compiler_remote_cache_key_file] ..." naming the file and what is wrong.
std::string read_hmac_key_file(const std::string& path);

// The signed value of an entry, and its contents back when the tag verifies.
std::string sign_entry(const std::string& secret, const std::string& key, const nlohmann::json& meta,
                       const std::string& object);
struct RemoteEntry {
  nlohmann::json meta;
  std::string object;
};
// nullopt, with the reason in `why`, when the value is not a signed entry of `key`.
std::optional<RemoteEntry> open_entry(const std::string& secret, const std::string& key, const std::string& value,
                                      std::string& why);

inline constexpr const char* kRemotePrefix = "kiln:entry:";

class RemoteCache {
 public:
  // The process's remote for these settings (one connection per URL and key file, made on
  // first use), or nullptr when none is configured or it failed before (warned then).
  // ConfigError for a bad URL or key file.
  static RemoteCache* of(const CacheSettings& settings);

  // The value stored for `key`, nullopt when absent or when the remote failed (then it
  // warns once and is off from now on).
  std::optional<std::string> get(const std::string& key);
  // Stores `value` for `key` (best effort: a failure warns once and turns the remote off).
  void put(const std::string& key, const std::string& value);
  // For `kiln cache --remote`: the cache keys of kiln's entries, and deleting one. These
  // throw SystemError when the remote fails.
  std::vector<std::string> keys();
  void erase(const std::string& key);
  const std::string& secret() const { return secret_; }
  const std::string& url() const { return url_; }

  RemoteCache(std::string url, RedisAddress address, std::string secret);
  ~RemoteCache();

 private:
  // Runs `command` (printf-style, as hiredis takes it) and returns its reply, or null with
  // `error_` set; reconnects on first use.
  void* command(const char* format, ...);
  bool connect();
  void fail(const std::string& what);

  std::mutex mu_;
  std::string url_;
  RedisAddress address_;
  std::string secret_;
  redisContext* ctx_ = nullptr;
  bool off_ = false;
  std::string error_;
};

}  // namespace kiln::cache
