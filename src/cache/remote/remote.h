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
// as a whole have deadlines (cache/remote/redis_connection.h), the job's remote time in all has a
// budget, a value past a size limit is refused unread, and the first failure warns once and
// turns the remote off for the rest of the process.
//
// A server with a password (requirepass, or an ACL user: redis://USER@HOST) gets AUTH with
// the password from KILN_REMOTE_CACHE_PASSWORD_FILE (a file only the user can read) or
// KILN_REMOTE_CACHE_PASSWORD — never from the URL, which `ps` and logs show. rediss:// is
// TLS (server certificate checked, optional client certificate).
#pragma once
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/cache/cache_settings.h"

namespace kiln::cache {

class RedisConnection;

struct RedisAddress {
  std::string host;
  int port = 6379;
  int db = 0;
  bool tls = false;   // rediss://
  std::string user;   // an ACL user (USER@HOST); "" = the default user
};
// "redis[s]://[USER@]HOST[:PORT][/DB]" (PORT and DB optional). ConfigError naming the
// option and what is valid for anything else, and for a password in the URL.
RedisAddress parse_redis_url(const std::string& url);

// What the remote is reached with besides its address, from the environment
// (remote_credentials_from_environment): the AUTH password ("" = none) and TLS's client
// certificate and key. ConfigError for a password file that others can read, or a
// certificate without its key.
struct RemoteCredentials {
  std::string password;
  std::string tls_cert_file, tls_key_file;
};
RemoteCredentials read_remote_credentials();

// The bounds of the remote's waits and sizes (docs/compile-cache.md).
struct RemoteLimits {
  std::chrono::milliseconds connect{1000};  // the TCP connection (and then TLS, AUTH, SELECT: commands)
  std::chrono::milliseconds command{2000};  // each command's whole reply (+1 s per 32 MiB carried)
  std::chrono::milliseconds budget{10000};  // all of a process's lookups and stores together
  size_t max_value_bytes = size_t{256} << 20;  // a value announced larger is refused unread
};

// The HMAC key: a regular file (not a link) owned by this user, readable by nobody else
// (no group or other permission bits: 0600 or 0400), 16 bytes to 64 KiB. ConfigError
// "[graph_compiler_remote_cache_key_file] ..." naming the file and what is wrong.
std::string read_hmac_key_file(const std::string& path);
// The same checks for any secret file: ConfigError "[option] ..." naming it.
std::string read_private_file(const std::string& path, const char* option, size_t min_bytes, size_t max_bytes,
                              const char* example);

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
  // warns once and is off from now on). A value announced larger than the limit is not
  // read: nullopt with the reason in `*refused` (the remote stays on). get and put count
  // against the job's budget.
  std::optional<std::string> get(const std::string& key, std::string* refused = nullptr);
  // Stores `value` for `key` (best effort: a failure warns once and turns the remote off).
  void put(const std::string& key, const std::string& value);
  // For `kiln cache --remote`: the cache keys of kiln's entries, and deleting one. These
  // throw SystemError when the remote fails.
  std::vector<std::string> keys();
  void erase(const std::string& key);
  const std::string& secret() const { return secret_; }
  // Whether the remote failed (and why): off for the rest of the process.
  bool off() const { return off_; }
  const std::string& error() const { return error_; }
  const std::string& url() const { return url_; }

  RemoteCache(std::string url, RedisAddress address, std::string secret, RemoteCredentials credentials = {},
              RemoteLimits limits = {});
  ~RemoteCache();

 private:
  // Runs `argv` and returns its reply (a redisReply*), or null with `error_` set (the
  // remote then off); connects on first use and once more after a dropped idle connection.
  // `budgeted`: the time counts against (and is cut by) the job's budget.
  void* command(const std::vector<std::string>& argv, bool budgeted);
  bool connect(std::chrono::steady_clock::time_point budget_end);
  void fail(const std::string& what);

  std::mutex mu_;
  std::string url_;
  RedisAddress address_;
  std::string secret_;
  RemoteCredentials credentials_;
  RemoteLimits limits_;
  std::unique_ptr<RedisConnection> conn_;
  std::chrono::steady_clock::duration spent_{};
  bool off_ = false;
  std::string error_;
  std::string refused_;  // the last command's value refused for its size
};

}  // namespace kiln::cache
