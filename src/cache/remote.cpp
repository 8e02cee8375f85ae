#include "cache/remote.h"

#include <fcntl.h>
#include <signal.h>
#include <hiredis/hiredis.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <cstring>
#include <map>
#include <regex>

#include "cache/session.h"
#include "kiln/compile_cache.h"
#include "kiln/error.h"

namespace kiln::cache {
namespace {

constexpr char kMagic[] = "KILNRC1\n";
constexpr size_t kMagicBytes = sizeof kMagic - 1;
constexpr size_t kTagBytes = 32;
constexpr timeval kConnectTimeout{1, 0};
constexpr timeval kCommandTimeout{2, 0};

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
  static const std::regex form(R"(redis://([A-Za-z0-9._-]+|\[[0-9A-Fa-f:]+\])(?::([0-9]{1,5}))?(?:/([0-9]{1,4}))?)");
  std::smatch m;
  RedisAddress a;
  if (std::regex_match(url, m, form)) {
    a.host = m[1].str();
    if (a.host.front() == '[') a.host = a.host.substr(1, a.host.size() - 2);
    if (m[2].matched) a.port = std::stoi(m[2].str());
    if (m[3].matched) a.db = std::stoi(m[3].str());
    if (a.port >= 1 && a.port <= 65535) return a;
  }
  KILN_THROW(ConfigError) << "[graph_compiler_remote_cache] '" << url
                          << "' is not a Redis address; valid: redis://HOST[:PORT][/DB], e.g. redis://127.0.0.1:6379/0"
                             " (PORT 1..65535, DB a number)";
}

std::string read_hmac_key_file(const std::string& path) {
  const char* option = "[graph_compiler_remote_cache_key_file] ";
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0)
    KILN_THROW(ConfigError) << option << "cannot use '" << path << "': " << std::strerror(errno);
  if (!S_ISREG(st.st_mode))
    KILN_THROW(ConfigError) << option << "'" << path << "' is not a regular file (a link or a directory is refused)";
  if (st.st_uid != ::geteuid())
    KILN_THROW(ConfigError) << option << "'" << path << "' belongs to uid " << st.st_uid
                            << ", not to this user: the key must be yours alone";
  if (st.st_mode & 077)
    KILN_THROW(ConfigError) << option << "'" << path << "' has mode " << std::oct << (st.st_mode & 0777) << std::dec
                            << ": others may read or change it; chmod 600 it";
  if (st.st_size < 16 || st.st_size > 65536)
    KILN_THROW(ConfigError) << option << "'" << path << "' holds " << st.st_size
                            << " bytes; a key has 16 bytes to 64 KiB (e.g. head -c 32 /dev/urandom > FILE)";
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) KILN_THROW(ConfigError) << option << "cannot read '" << path << "': " << std::strerror(errno);
  // What was opened is what was checked (not a file swapped in since the lstat).
  struct stat opened {};
  if (::fstat(fd, &opened) != 0 || opened.st_ino != st.st_ino || opened.st_dev != st.st_dev ||
      opened.st_uid != st.st_uid || opened.st_mode != st.st_mode || opened.st_size != st.st_size) {
    ::close(fd);
    KILN_THROW(ConfigError) << option << "'" << path << "' changed while it was read; try again";
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
  if (done != secret.size()) KILN_THROW(ConfigError) << option << "cannot read all of '" << path << "'";
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
      KILN_THROW(ConfigError) << "[graph_compiler_remote_cache] '" << settings.remote_url
                              << "' needs a key file to sign and check its entries: give "
                                 "graph_compiler_remote_cache_key_file / --remote-cache-key-file / "
                                 "KILN_REMOTE_CACHE_KEY_FILE (a file only you can read, mode 600)";
    r = std::make_unique<RemoteCache>(settings.remote_url, parse_redis_url(settings.remote_url),
                                      read_hmac_key_file(settings.remote_key_file));
  }
  return r.get();
}

RemoteCache::RemoteCache(std::string url, RedisAddress address, std::string secret)
    : url_(std::move(url)), address_(std::move(address)), secret_(std::move(secret)) {
  // hiredis writes to its socket with write(2): a connection the server closed would end
  // the process by SIGPIPE instead of failing the write (EPIPE), which the remote survives.
  struct sigaction old {};
  if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) std::signal(SIGPIPE, SIG_IGN);
}

RemoteCache::~RemoteCache() {
  if (ctx_) redisFree(ctx_);
}

void RemoteCache::fail(const std::string& what) {
  error_ = what;
  off_ = true;
  if (ctx_) redisFree(ctx_);
  ctx_ = nullptr;
  warn_once("[graph_compiler_remote_cache] " + url_ + ": " + what + "; going on without the remote cache");
}

bool RemoteCache::connect() {
  if (ctx_) return true;
  ctx_ = redisConnectWithTimeout(address_.host.c_str(), address_.port, kConnectTimeout);
  if (!ctx_ || ctx_->err) {
    fail(std::string("cannot connect: ") + (ctx_ ? ctx_->errstr : "out of memory"));
    return false;
  }
  redisSetTimeout(ctx_, kCommandTimeout);
  if (address_.db != 0) {
    auto* r = static_cast<redisReply*>(redisCommand(ctx_, "SELECT %d", address_.db));
    const bool ok = r && r->type == REDIS_REPLY_STATUS;
    const std::string msg = r && r->type == REDIS_REPLY_ERROR ? r->str : ctx_->errstr;
    if (r) freeReplyObject(r);
    if (!ok) {
      fail("cannot select database " + std::to_string(address_.db) + ": " + msg);
      return false;
    }
  }
  return true;
}

void* RemoteCache::command(const char* format, ...) {
  redisReply* r = nullptr;
  // A connection the server or the network dropped while idle is made again, once.
  for (int attempt = 0; attempt < 2 && !r; ++attempt) {
    if (off_ || !connect()) return nullptr;
    va_list ap;
    va_start(ap, format);
    r = static_cast<redisReply*>(redisvCommand(ctx_, format, ap));
    va_end(ap);
    if (!r && attempt == 0) {
      redisFree(ctx_);
      ctx_ = nullptr;
    }
  }
  if (!r) {
    fail(std::string("the server did not answer: ") + (ctx_ ? ctx_->errstr : "the connection was lost"));
    return nullptr;
  }
  if (r->type == REDIS_REPLY_ERROR) {
    const std::string msg = r->str;
    freeReplyObject(r);
    fail("the server refused a command: " + msg);
    return nullptr;
  }
  return r;
}

std::optional<std::string> RemoteCache::get(const std::string& key) {
  std::lock_guard<std::mutex> g(mu_);
  const std::string name = kRemotePrefix + key;
  auto* r = static_cast<redisReply*>(command("GET %b", name.data(), name.size()));
  if (!r) return std::nullopt;
  std::optional<std::string> value;
  if (r->type == REDIS_REPLY_STRING) value.emplace(r->str, r->len);
  freeReplyObject(r);
  return value;
}

void RemoteCache::put(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> g(mu_);
  const std::string name = kRemotePrefix + key;
  if (auto* r = static_cast<redisReply*>(command("SET %b %b", name.data(), name.size(), value.data(), value.size())))
    freeReplyObject(r);
}

std::vector<std::string> RemoteCache::keys() {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<std::string> out;
  std::string cursor = "0";
  const std::string pattern = std::string(kRemotePrefix) + "*";
  do {
    auto* r = static_cast<redisReply*>(command("SCAN %s MATCH %s COUNT 1000", cursor.c_str(), pattern.c_str()));
    if (!r) KILN_THROW(SystemError) << "[cache] remote " << url_ << ": " << error_;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
      freeReplyObject(r);
      KILN_THROW(SystemError) << "[cache] remote " << url_ << ": SCAN answered something else than a cursor and keys";
    }
    cursor.assign(r->element[0]->str, r->element[0]->len);
    for (size_t i = 0; i < r->element[1]->elements; ++i) {
      const redisReply* k = r->element[1]->element[i];
      out.emplace_back(std::string(k->str, k->len).substr(std::strlen(kRemotePrefix)));
    }
    freeReplyObject(r);
  } while (cursor != "0");
  return out;
}

void RemoteCache::erase(const std::string& key) {
  std::lock_guard<std::mutex> g(mu_);
  const std::string name = kRemotePrefix + key;
  auto* r = static_cast<redisReply*>(command("DEL %b", name.data(), name.size()));
  if (!r) KILN_THROW(SystemError) << "[cache] remote " << url_ << ": " << error_;
  freeReplyObject(r);
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
    const std::optional<std::string> value = remote->get(key);
    if (!value) continue;  // removed meanwhile
    Entry e;
    e.key = key;
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
