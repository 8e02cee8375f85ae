// One connection to a Redis server, every wait bounded by a deadline: the TCP connect, the
// TLS handshake (rediss://), and each command as a whole — sending it and reading all of
// its reply — not each recv() (a server that trickles one byte a second cannot hold a job).
// A bulk reply is refused by its announced length before any of it is read, so a huge
// value costs no memory.
//
// The protocol is hiredis' (redisFormatCommandArgv writes the commands, its redisReader
// parses the replies); the transport is kiln's: Debian 12's libhiredis (0.14) has neither
// deadlines for a whole reply nor TLS (hiredis_ssl came with 1.0), so the socket is read
// here with poll(), through OpenSSL when the address is rediss://.
#pragma once
#include <hiredis/hiredis.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace kiln::cache {

using Clock = std::chrono::steady_clock;

struct ReplyFree {
  void operator()(redisReply* r) const {
    if (r) freeReplyObject(r);
  }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

struct TlsOptions {
  bool on = false;
  // A client certificate (PEM, with its chain) and its key, for servers with
  // tls-auth-clients; both or neither.
  std::string cert_file, key_file;
};

class RedisConnection {
 public:
  // Connected (and through the TLS handshake, the server's certificate checked against the
  // system's CAs or $SSL_CERT_FILE / $SSL_CERT_DIR, and its name against `host`) by
  // `deadline`; nullptr with the reason in `why`.
  static std::unique_ptr<RedisConnection> open(const std::string& host, int port, const TlsOptions& tls,
                                               Clock::time_point deadline, std::string& why);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Sends `argv` and reads its whole reply by `deadline` (moved later by 1 s per 32 MiB the
  // command carries, so big values on a fast link are not cut). A reply whose bulk string
  // announces more than `max_bulk_bytes`, or that grows past it, is refused before it is
  // read. nullptr with the reason in `why`; the connection is unusable after that.
  Reply command(const std::vector<std::string>& argv, Clock::time_point deadline, size_t max_bulk_bytes,
                std::string& why);

 private:
  RedisConnection() = default;
  bool send_all(const std::string& bytes, Clock::time_point deadline, std::string& why);
  // Up to `n` bytes into `buf`: > 0 bytes read, 0 = would block (poll for `events`),
  // -1 = failed or closed (why set).
  long read_some(char* buf, size_t n, short& events, std::string& why);
  long write_some(const char* buf, size_t n, short& events, std::string& why);
  bool wait(short events, Clock::time_point deadline, std::string& why);
  bool handshake(const std::string& host, const TlsOptions& tls, Clock::time_point deadline, std::string& why);

  int fd_ = -1;
  SSL_CTX* ssl_ctx_ = nullptr;
  SSL* ssl_ = nullptr;
};

// The time a command carrying `bytes` may take beyond its base deadline.
Clock::duration transfer_allowance(size_t bytes);

}  // namespace kiln::cache
