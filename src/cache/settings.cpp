#include "kiln/cache/cache_settings.h"
#include "kiln/base/settings.h"

#include <array>

#include "ir/name_table.h"

namespace kiln {
namespace {

constexpr std::array<std::string_view, kNumCacheOutcomes> kOutcomeNames = {"off", "hit", "miss", "error"};
static_assert(int(CacheOutcome::error) + 1 == kNumCacheOutcomes);

}  // namespace

CacheSettings cache_with_environment_defaults(CacheSettings given) {
  given.dir = setting_or("KILN_CACHE_DIR", std::move(given.dir));
  given.remote_url = setting_or("KILN_REMOTE_CACHE", std::move(given.remote_url));
  given.remote_key_file = setting_or("KILN_REMOTE_CACHE_KEY_FILE", std::move(given.remote_key_file));
  return given;
}

RemoteSecretsEnvironment remote_secrets_from_environment() {
  RemoteSecretsEnvironment e;
  e.password_file = setting_text("KILN_REMOTE_CACHE_PASSWORD_FILE");
  e.password_set = setting_value("KILN_REMOTE_CACHE_PASSWORD").has_value();
  e.password = setting_text("KILN_REMOTE_CACHE_PASSWORD");
  e.tls_cert_file = setting_text("KILN_REMOTE_CACHE_TLS_CERT_FILE");
  e.tls_key_file = setting_text("KILN_REMOTE_CACHE_TLS_KEY_FILE");
  return e;
}

std::string_view cache_outcome_name(CacheOutcome o) { return name_of(kOutcomeNames, o); }

}  // namespace kiln
