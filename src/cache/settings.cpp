#include "kiln/cache_settings.h"

#include <array>
#include <cstdlib>

#include "ir/name_table.h"

namespace kiln {
namespace {

constexpr std::array<std::string_view, kNumCacheOutcomes> kOutcomeNames = {"off", "hit", "miss", "error"};
static_assert(int(CacheOutcome::error) + 1 == kNumCacheOutcomes);

}  // namespace

std::string cache_dir_from_environment() {
  const char* env = std::getenv("KILN_CACHE_DIR");
  return env ? env : "";
}

std::string remote_cache_from_environment() {
  const char* env = std::getenv("KILN_REMOTE_CACHE");
  return env ? env : "";
}

std::string remote_cache_key_file_from_environment() {
  const char* env = std::getenv("KILN_REMOTE_CACHE_KEY_FILE");
  return env ? env : "";
}

RemoteSecretsEnvironment remote_secrets_from_environment() {
  const auto get = [](const char* name) {
    const char* env = std::getenv(name);
    return std::string(env ? env : "");
  };
  RemoteSecretsEnvironment e;
  e.password_file = get("KILN_REMOTE_CACHE_PASSWORD_FILE");
  e.password_set = std::getenv("KILN_REMOTE_CACHE_PASSWORD") != nullptr;
  e.password = get("KILN_REMOTE_CACHE_PASSWORD");
  e.tls_cert_file = get("KILN_REMOTE_CACHE_TLS_CERT_FILE");
  e.tls_key_file = get("KILN_REMOTE_CACHE_TLS_KEY_FILE");
  return e;
}

std::string_view cache_outcome_name(CacheOutcome o) { return name_of(kOutcomeNames, o); }

}  // namespace kiln
