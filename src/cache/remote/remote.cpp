#include "cache/remote/remote.h"

#include <fcntl.h>
#include <signal.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <regex>

#include "cache/remote/redis_connection.h"
#include "cache/session.h"
#include "kiln/cache/cache_settings.h"
#include "kiln/cache/compile_cache.h"
#include "kiln/base/error.h"
#include "kiln/base/printable.h"

namespace kiln::cache {
namespace {

constexpr char kTooLarge[] = "the server announced a value of ";

constexpr char kMagic[] = "KILNRC1\n";
constexpr size_t kMagicBytes = sizeof kMagic - 1;
constexpr size_t kTagBytes = 32;

// What the tag covers: the cache key (so an entry cannot stand under another key), the
// metadata and the object.
std::string tag_of(const std::string& secret, const std::string& key, const std::string& meta,
                   const std::string& object) {
  std::string message = "kiln-remote-cache-v1";
  message += '\0';
  message += key;
  message += '\0';
  const uint64_t n = meta.size();
  message.append(reinterpret_cast<const char*>(&n), sizeof n);
  message += meta;
  message += object;
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
            reinterpret_cast<const unsigned char*>(message.data()), message.size(), out, &len) ||
      len != kTagBytes)
    KILN_THROW(SystemError) << "[graph_compiler_remote_cache] HMAC-SHA256 failed (OpenSSL)";
  return std::string(reinterpret_cast<const char*>(out), len);
}

}  // namespace

RedisAddress parse_redis_url(const std::string& url) {
  static const std::regex form(
      R"((rediss?)://(?:([^@/:]*)(:[^@/]*)?@)?([A-Za-z0-9._-]+|\[[0-9A-Fa-f:]+\])(?::([0-9]{1,5}))?(?:/([0-9]{1,4}))?)");
  std::smatch m;
  RedisAddress a;
  if (std::regex_match(url, m, form)) {
    if (m[3].matched)
      KILN_THROW(ConfigError) << "[graph_compiler_remote_cache] the address has a password in it, which `ps`, "
                                 "logs and metrics show; give redis[s]://[USER@]HOST[:PORT][/DB] and the password "
                                 "in KILN_REMOTE_CACHE_PASSWORD_FILE (a file only you can read, mode 600) or "
                                 "KILN_REMOTE_CACHE_PASSWORD";
    a.tls = m[1].str() == "rediss";
    a.user = m[2].str();
    a.host = m[4].str();
    if (a.host.front() == '[') a.host = a.host.substr(1, a.host.size() - 2);
    if (m[5].matched) a.port = std::stoi(m[5].str());
    if (m[6].matched) a.db = std::stoi(m[6].str());
    if (a.port >= 1 && a.port <= 65535 && (m[2].matched ? !a.user.empty() : true)) return a;
  }
  KILN_THROW(ConfigError) << "[graph_compiler_remote_cache] '" << printable(url)
                          << "' is not a Redis address; valid: redis://[USER@]HOST[:PORT][/DB] (rediss:// for TLS), "
                             "e.g. redis://127.0.0.1:6379/0 (PORT 1..65535, DB a number)";
}

RemoteCredentials read_remote_credentials() {
  RemoteCredentials c;
  const RemoteSecretsEnvironment env = remote_secrets_from_environment();
  if (!env.password_file.empty() && env.password_set)
    KILN_THROW(ConfigError) << "[graph_compiler_remote_cache] both KILN_REMOTE_CACHE_PASSWORD_FILE and "
                               "KILN_REMOTE_CACHE_PASSWORD are set; give one";
  if (!env.password_file.empty()) {
    c.password = read_private_file(env.password_file, "[KILN_REMOTE_CACHE_PASSWORD_FILE] ", 1, 4096,
                                   "printf %s PASSWORD > FILE");
    while (!c.password.empty() && (c.password.back() == '\n' || c.password.back() == '\r')) c.password.pop_back();
    if (c.password.empty())
      KILN_THROW(ConfigError) << "[KILN_REMOTE_CACHE_PASSWORD_FILE] '" << printable(env.password_file)
                              << "' holds no password (only a line end)";
  } else if (env.password_set) {
    c.password = env.password;
    if (c.password.empty())
      KILN_THROW(ConfigError) << "[KILN_REMOTE_CACHE_PASSWORD] is set but empty; unset it or give the password";
  }
  if (env.tls_cert_file.empty() != env.tls_key_file.empty())
    KILN_THROW(ConfigError) << "[KILN_REMOTE_CACHE_TLS_CERT_FILE] a client certificate goes with its key: give both "
                               "KILN_REMOTE_CACHE_TLS_CERT_FILE and KILN_REMOTE_CACHE_TLS_KEY_FILE, or neither";
  if (!env.tls_key_file.empty())
    read_private_file(env.tls_key_file, "[KILN_REMOTE_CACHE_TLS_KEY_FILE] ", 1, 1 << 20, "chmod 600 FILE");
  c.tls_cert_file = env.tls_cert_file;
  c.tls_key_file = env.tls_key_file;
  return c;
}

std::string read_hmac_key_file(const std::string& path) {
  return read_private_file(path, "[graph_compiler_remote_cache_key_file] ", 16, 65536,
                           "head -c 32 /dev/urandom > FILE");
}

std::string read_private_file(const std::string& path, const char* option, size_t min_bytes, size_t max_bytes,
                              const char* example) {
  const std::string shown = printable(path);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0)
    KILN_THROW(ConfigError) << option << "cannot use '" << shown << "': " << std::strerror(errno);
  if (!S_ISREG(st.st_mode))
    KILN_THROW(ConfigError) << option << "'" << shown << "' is not a regular file (a link or a directory is refused)";
  if (st.st_uid != ::geteuid())
    KILN_THROW(ConfigError) << option << "'" << shown << "' belongs to uid " << st.st_uid
                            << ", not to this user: the file must be yours alone";
  if (st.st_mode & 077)
    KILN_THROW(ConfigError) << option << "'" << shown << "' has mode " << std::oct << (st.st_mode & 0777) << std::dec
                            << ": others may read or change it; chmod 600 it";
  if (static_cast<size_t>(st.st_size) < min_bytes || static_cast<size_t>(st.st_size) > max_bytes)
    KILN_THROW(ConfigError) << option << "'" << shown << "' holds " << st.st_size << " bytes; it must hold "
                            << (max_bytes == 65536 ? std::string("16 bytes to 64 KiB")
                                                   : std::to_string(min_bytes) + " to " + std::to_string(max_bytes) +
                                                         " bytes")
                            << " (e.g. " << example << ")";
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) KILN_THROW(ConfigError) << option << "cannot read '" << shown << "': " << std::strerror(errno);
  // What was opened is what was checked (not a file swapped in since the lstat).
  struct stat opened {};
  if (::fstat(fd, &opened) != 0 || opened.st_ino != st.st_ino || opened.st_dev != st.st_dev ||
      opened.st_uid != st.st_uid || opened.st_mode != st.st_mode || opened.st_size != st.st_size) {
    ::close(fd);
    KILN_THROW(ConfigError) << option << "'" << shown << "' changed while it was read; try again";
  }
  std::string secret(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < secret.size()) {
    const ssize_t n = ::read(fd, secret.data() + done, secret.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done != secret.size()) KILN_THROW(ConfigError) << option << "cannot read all of '" << shown << "'";
  return secret;
}

std::string sign_entry(const std::string& secret, const std::string& key, const nlohmann::json& meta,
                       const std::string& object) {
  const std::string m = meta.dump();
  const uint64_t n = m.size();
  std::string value(kMagic, kMagicBytes);
  value += tag_of(secret, key, m, object);
  value.append(reinterpret_cast<const char*>(&n), sizeof n);
  value += m;
  value += object;
  return value;
}

std::optional<RemoteEntry> open_entry(const std::string& secret, const std::string& key, const std::string& value,
                                      std::string& why) {
  const size_t head = kMagicBytes + kTagBytes + sizeof(uint64_t);
  if (value.size() < head || value.compare(0, kMagicBytes, kMagic) != 0) {
    why = "it is not a signed kiln entry";
    return std::nullopt;
  }
  uint64_t n = 0;
  std::memcpy(&n, value.data() + kMagicBytes + kTagBytes, sizeof n);
  if (n > value.size() - head) {
    why = "its metadata length is out of range";
    return std::nullopt;
  }
  const std::string meta = value.substr(head, n), object = value.substr(head + n);
  const std::string want = tag_of(secret, key, meta, object);
  if (CRYPTO_memcmp(want.data(), value.data() + kMagicBytes, kTagBytes) != 0) {
    why = "its HMAC tag does not verify (changed, stored under another key, or signed with another key file)";
    return std::nullopt;
  }
  RemoteEntry e;
  e.meta = nlohmann::json::parse(meta, nullptr, false);
  if (e.meta.is_discarded() || !e.meta.is_object()) {
    why = "its metadata is not a JSON object";
    return std::nullopt;
  }
  e.object = object;
  return e;
}

RemoteCache* RemoteCache::of(const CacheSettings& settings) {
  if (settings.remote_url.empty()) return nullptr;
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, std::unique_ptr<RemoteCache>> remotes;
  std::lock_guard<std::mutex> g(mu);
  auto& r = remotes[{settings.remote_url, settings.remote_key_file}];
  if (!r) {
    if (settings.remote_key_file.empty())
      KILN_THROW(ConfigError) << "[graph_compiler_remote_cache] '" << printable(settings.remote_url)
                              << "' needs a key file to sign and check its entries: give "
                                 "graph_compiler_remote_cache_key_file / --remote-cache-key-file / "
                                 "KILN_REMOTE_CACHE_KEY_FILE (a file only you can read, mode 600)";
    RedisAddress address = parse_redis_url(settings.remote_url);
    std::string secret = read_hmac_key_file(settings.remote_key_file);
    r = std::make_unique<RemoteCache>(settings.remote_url, std::move(address), std::move(secret),
                                      read_remote_credentials());
  }
  return r.get();
}

RemoteCache::RemoteCache(std::string url, RedisAddress address, std::string secret, RemoteCredentials credentials,
                         RemoteLimits limits)
    : url_(std::move(url)),
      address_(std::move(address)),
      secret_(std::move(secret)),
      credentials_(std::move(credentials)),
      limits_(limits) {
  // A connection the server closed fails a write (EPIPE) instead of ending the process:
  // plain sockets send with MSG_NOSIGNAL, but OpenSSL writes with write(2).
  struct sigaction old {};
  if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) std::signal(SIGPIPE, SIG_IGN);
}

RemoteCache::~RemoteCache() = default;

void RemoteCache::fail(const std::string& what) {
  error_ = what;
  off_ = true;
  conn_.reset();
  warn_once("[graph_compiler_remote_cache] " + url_ + ": " + what + "; going on without the remote cache");
}

bool RemoteCache::connect(Clock::time_point budget_end) {
  if (conn_) return true;
  std::string why;
  const auto now = Clock::now();
  conn_ = RedisConnection::open(address_.host, address_.port,
                                TlsOptions{address_.tls, credentials_.tls_cert_file, credentials_.tls_key_file},
                                std::min(now + limits_.connect, budget_end), why);
  if (!conn_) {
    fail("cannot connect: " + why);
    return false;
  }
  // AUTH and SELECT before the first command; a refusal names what the server said.
  std::vector<std::vector<std::string>> setup;
  if (!credentials_.password.empty()) {
    if (address_.user.empty()) setup.push_back({"AUTH", credentials_.password});
    else setup.push_back({"AUTH", address_.user, credentials_.password});
  } else if (!address_.user.empty()) {
    fail("the address names the user '" + address_.user +
         "' but no password is given (KILN_REMOTE_CACHE_PASSWORD_FILE or KILN_REMOTE_CACHE_PASSWORD)");
    return false;
  }
  if (address_.db != 0) setup.push_back({"SELECT", std::to_string(address_.db)});
  for (const auto& argv : setup) {
    Reply r = conn_->command(argv, std::min(Clock::now() + limits_.command, budget_end), 1 << 16, why);
    const bool ok = r && r->type == REDIS_REPLY_STATUS;
    if (ok) continue;
    const std::string said = r && r->type == REDIS_REPLY_ERROR ? std::string(r->str, r->len)
                             : r                               ? "an unexpected reply"
                                                               : why;
    fail(argv[0] == "AUTH" ? "the server refused the password" + std::string(address_.user.empty() ? "" : " of user '" +
                                                                  address_.user + "'") + ": " + said
                           : "cannot select database " + std::to_string(address_.db) + ": " + said);
    return false;
  }
  return true;
}

void* RemoteCache::command(const std::vector<std::string>& argv, bool budgeted) {
  const auto start = Clock::now();
  const auto budget_end =
      budgeted ? start + (limits_.budget - std::min<Clock::duration>(spent_, limits_.budget)) : Clock::time_point::max();
  if (budgeted && spent_ >= limits_.budget) {
    if (!off_)
      fail("it took " + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(spent_).count()) +
           " ms in all, past the job's budget of " + std::to_string(limits_.budget.count()) + " ms");
    return nullptr;
  }
  Reply r;
  std::string why;
  // A connection the server or the network dropped while idle is made again, once.
  bool cut = false;  // the deadline was the budget's end, not the command's own
  for (int attempt = 0; attempt < 2 && !r; ++attempt) {
    if (off_ || !connect(budget_end)) break;
    cut = budget_end < Clock::now() + limits_.command;
    r = conn_->command(argv, std::min(Clock::now() + limits_.command, budget_end), limits_.max_value_bytes, why);
    if (!r) {
      conn_.reset();
      // Only a connection that was closed is worth a second try, not a slow or odd server.
      if (why != "the server closed the connection" && why.rfind("Connection reset", 0) != 0 &&
          why.rfind("Broken pipe", 0) != 0)
        break;
    }
  }
  if (budgeted) spent_ += Clock::now() - start;
  if (off_) return nullptr;
  if (!r && why.rfind(kTooLarge, 0) == 0) {
    // A value too large to read: refused like a tampered one (the caller compiles and
    // replaces it), the connection (with the value's bytes still coming) closed, the
    // remote still on.
    refused_ = why;
    return nullptr;
  }
  if (!r) {
    if (cut)
      why += " (the job's remote budget of " + std::to_string(limits_.budget.count()) + " ms is spent)";
    fail("the server did not answer " + argv[0] + ": " + why);
    return nullptr;
  }
  if (r->type == REDIS_REPLY_ERROR) {
    fail("the server refused " + argv[0] + ": " + std::string(r->str, r->len));
    return nullptr;
  }
  return r.release();
}

std::optional<std::string> RemoteCache::get(const std::string& key, std::string* refused) {
  std::lock_guard<std::mutex> g(mu_);
  refused_.clear();
  Reply r(static_cast<redisReply*>(command({"GET", kRemotePrefix + key}, true)));
  if (refused) *refused = refused_;
  if (!r) return std::nullopt;
  if (r->type == REDIS_REPLY_STRING) return std::string(r->str, r->len);
  if (r->type != REDIS_REPLY_NIL) fail("GET answered something else than a value or nothing");
  return std::nullopt;
}

void RemoteCache::put(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> g(mu_);
  if (value.size() > limits_.max_value_bytes) {
    warn_once("[graph_compiler_remote_cache] an entry of " + std::to_string(value.size()) +
              " bytes is larger than the remote's limit of " + std::to_string(limits_.max_value_bytes) +
              " bytes; kept in the local cache only");
    return;
  }
  Reply r(static_cast<redisReply*>(command({"SET", kRemotePrefix + key, value}, true)));
}

std::vector<std::string> RemoteCache::keys() {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<std::string> out;
  std::string cursor = "0";
  const std::string prefix = kRemotePrefix;
  const auto not_scan = [&](const std::string& what) {
    KILN_THROW(SystemError) << "[cache] remote " << printable(url_) << ": SCAN answered " << what
                            << ", not a cursor and a list of keys: is this a Redis server?";
  };
  do {
    Reply r(static_cast<redisReply*>(command({"SCAN", cursor, "MATCH", prefix + "*", "COUNT", "1000"}, false)));
    if (!r) KILN_THROW(SystemError) << "[cache] remote " << printable(url_) << ": " << printable(error_);
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) not_scan("something else");
    const redisReply* c = r->element[0];
    const redisReply* list = r->element[1];
    if (c->type != REDIS_REPLY_STRING || list->type != REDIS_REPLY_ARRAY) not_scan("an array of other things");
    cursor.assign(c->str, c->len);
    if (cursor.empty() || cursor.find_first_not_of("0123456789") != std::string::npos)
      not_scan("a cursor that is not a number");
    for (size_t i = 0; i < list->elements; ++i) {
      const redisReply* k = list->element[i];
      if (k->type != REDIS_REPLY_STRING) not_scan("a key that is not a string");
      const std::string name(k->str, k->len);
      if (name.compare(0, prefix.size(), prefix) != 0) continue;  // MATCH ignored: not one of kiln's keys
      out.push_back(name.substr(prefix.size()));
    }
  } while (cursor != "0");
  return out;
}

void RemoteCache::erase(const std::string& key) {
  std::lock_guard<std::mutex> g(mu_);
  Reply r(static_cast<redisReply*>(command({"DEL", kRemotePrefix + key}, false)));
  if (!r) KILN_THROW(SystemError) << "[cache] remote " << printable(url_) << ": " << printable(error_);
}

}  // namespace kiln::cache

namespace kiln {

RemoteCompileCache::RemoteCompileCache(std::string url, std::string key_file)
    : url_(std::move(url)), key_file_(std::move(key_file)) {
  if (key_file_.empty())
    KILN_THROW(ConfigError) << "[cache] the remote cache's entries are checked with its key file: give "
                               "--remote-cache-key-file (or KILN_REMOTE_CACHE_KEY_FILE)";
  cache::parse_redis_url(url_);
  cache::read_hmac_key_file(key_file_);
  cache::read_remote_credentials();
}

namespace {
cache::RemoteCache& remote_of(const std::string& url, const std::string& key_file) {
  CacheSettings s;
  s.remote_url = url;
  s.remote_key_file = key_file;
  return *cache::RemoteCache::of(s);
}
}  // namespace

std::vector<RemoteCompileCache::Entry> RemoteCompileCache::entries() const {
  cache::RemoteCache* remote = &remote_of(url_, key_file_);
  std::vector<Entry> out;
  for (const std::string& key : remote->keys()) {
    Entry e;
    e.key = key;
    const std::optional<std::string> value = remote->get(key, &e.problem);
    if (!value && !e.problem.empty()) {  // too large to read: listed as refused
      out.push_back(std::move(e));
      continue;
    }
    if (remote->off()) KILN_THROW(SystemError) << "[cache] remote " << printable(url_) << ": " << printable(remote->error());
    if (!value) continue;  // removed meanwhile
    e.bytes = static_cast<int64_t>(value->size());
    if (!cache::open_entry(remote->secret(), key, *value, e.problem)) {
      if (e.problem.empty()) e.problem = "refused";
    } else {
      e.problem.clear();
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> RemoteCompileCache::remove(bool only_refused) const {
  cache::RemoteCache* remote = &remote_of(url_, key_file_);
  std::vector<std::string> removed;
  for (const Entry& e : entries()) {
    if (only_refused && e.problem.empty()) continue;
    remote->erase(e.key);
    removed.push_back(e.key);
  }
  return removed;
}

}  // namespace kiln
