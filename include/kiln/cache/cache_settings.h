// The compile cache's settings, held by value from the edge (RunConfig, the `kiln`
// command, the environment: resolved once) down to the cache, and the outcome of one
// compile's use of it.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace kiln {

inline constexpr int64_t kDefaultCacheSizeCap = int64_t{2} << 30;  // 2 GiB

struct CacheSettings {
  // The cache directory (graph_compiler_cache_dir); empty = no cache. kiln creates it
  // (mode 0700) if needed.
  std::string dir{};
  // Least recently used entries are evicted to stay under this many bytes.
  int64_t size_cap_bytes = kDefaultCacheSizeCap;
  // false = a cache that cannot work warns and compiles without it; true = ConfigError.
  bool strict = false;
  // How long to wait for another process compiling the same graph before compiling
  // privately (without storing).
  double lock_timeout_seconds = 600;
  // The remote tier behind `dir` (graph_compiler_remote_cache, "redis[s]://[USER@]HOST[:PORT][/DB]"),
  // and the file of the HMAC key its entries are signed with; empty = none
  // (cache/remote/remote.h).
  std::string remote_url{};
  std::string remote_key_file{};

  bool enabled() const { return !dir.empty(); }
};

// `given` with what it leaves empty taken from the environment (setting_or): dir from
// KILN_CACHE_DIR, remote_url from KILN_REMOTE_CACHE, remote_key_file from
// KILN_REMOTE_CACHE_KEY_FILE. The one place kiln reads them.
CacheSettings cache_with_environment_defaults(CacheSettings given);
// How the remote tier is reached besides its address, from the environment only (a
// password never goes through the command line, where `ps` shows it):
// KILN_REMOTE_CACHE_PASSWORD_FILE, KILN_REMOTE_CACHE_PASSWORD (set, even empty, or not),
// KILN_REMOTE_CACHE_TLS_CERT_FILE and KILN_REMOTE_CACHE_TLS_KEY_FILE. The one place kiln
// reads them; cache::read_remote_credentials checks them.
struct RemoteSecretsEnvironment {
  std::string password_file, password, tls_cert_file, tls_key_file;
  bool password_set = false;
};
RemoteSecretsEnvironment remote_secrets_from_environment();

// What one compile got from the cache.
enum class CacheOutcome : uint8_t {
  off,    // no cache in use (none configured, or it cannot work and is not strict)
  hit,    // loaded from the cache
  miss,   // compiled and stored
  error,  // compiled, but storing it failed
};
inline constexpr int kNumCacheOutcomes = 4;
// "off", "hit", "miss", "error": how reports, metrics and logs spell it.
std::string_view cache_outcome_name(CacheOutcome o);
inline std::ostream& operator<<(std::ostream& os, CacheOutcome o) { return os << cache_outcome_name(o); }

}  // namespace kiln
