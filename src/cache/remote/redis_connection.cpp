#include "cache/remote/redis_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kiln::cache {
namespace {

std::string ssl_error_text() {
  const unsigned long e = ERR_get_error();
  if (e == 0) return "the TLS connection failed";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 || ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

int millis_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 60'000));
}

// A TCP connection to one of `host`'s addresses by `deadline`, non-blocking; -1 with why.
int connect_tcp(const std::string& host, int port, Clock::time_point deadline, std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    why = "cannot resolve " + host + ": " + ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  why = "no address of " + host;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      why = std::string("socket: ") + std::strerror(errno);
      continue;
    }
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = ::poll(&p, 1, millis_until(deadline));
      if (rc == 0) {
        why = "no connection within the time allowed";
        rc = -1;
      } else if (rc > 0) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        rc = err == 0 ? 0 : -1;
        if (err) why = std::strerror(err);
      } else {
        why = std::strerror(errno);
      }
    } else if (rc != 0) {
      why = std::strerror(errno);
    }
    if (rc != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd >= 0) {
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

// The bulk length a reply announces in its first line ("$N\r\n"), -1 when the reply is
// not a bulk string, -2 while the line is incomplete.
long long announced_bulk(const std::string& head) {
  if (head.empty()) return -2;
  if (head[0] != '$') return -1;
  const size_t end = head.find("\r\n");
  if (end == std::string::npos) return head.size() > 24 ? -1 : -2;
  long long n = 0;
  for (size_t i = 1; i < end; ++i) {
    if (head[i] < '0' || head[i] > '9') return -1;  // $-1 (nil) or not the protocol: the reader says which
    if (n > (1LL << 50)) return 1LL << 50;
    n = n * 10 + (head[i] - '0');
  }
  return n;
}

}  // namespace

Clock::duration transfer_allowance(size_t bytes) {
  return std::chrono::milliseconds(static_cast<long long>(bytes / ((32u << 20) / 1000)));
}

std::unique_ptr<RedisConnection> RedisConnection::open(const std::string& host, int port, const TlsOptions& tls,
                                                       Clock::time_point deadline, std::string& why) {
  std::unique_ptr<RedisConnection> c(new RedisConnection);
  c->fd_ = connect_tcp(host, port, deadline, why);
  if (c->fd_ < 0) return nullptr;
  if (tls.on && !c->handshake(host, tls, deadline, why)) return nullptr;
  return c;
}

RedisConnection::~RedisConnection() {
  if (ssl_) SSL_free(ssl_);
  if (ssl_ctx_) SSL_CTX_free(ssl_ctx_);
  if (fd_ >= 0) ::close(fd_);
}

bool RedisConnection::handshake(const std::string& host, const TlsOptions& tls, Clock::time_point deadline,
                                std::string& why) {
  ssl_ctx_ = SSL_CTX_new(TLS_client_method());
  if (!ssl_ctx_) return why = "TLS: " + ssl_error_text(), false;
  SSL_CTX_set_min_proto_version(ssl_ctx_, TLS1_2_VERSION);
  SSL_CTX_set_verify(ssl_ctx_, SSL_VERIFY_PEER, nullptr);
  if (SSL_CTX_set_default_verify_paths(ssl_ctx_) != 1) return why = "TLS: no CA certificates: " + ssl_error_text(), false;
  if (!tls.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ssl_ctx_, tls.cert_file.c_str()) != 1)
      return why = "TLS: cannot use the client certificate " + tls.cert_file + ": " + ssl_error_text(), false;
    if (SSL_CTX_use_PrivateKey_file(ssl_ctx_, tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ssl_ctx_) != 1)
      return why = "TLS: cannot use the client key " + tls.key_file + ": " + ssl_error_text(), false;
  }
  ssl_ = SSL_new(ssl_ctx_);
  if (!ssl_ || SSL_set_fd(ssl_, fd_) != 1) return why = "TLS: " + ssl_error_text(), false;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
  if (is_ip_literal(host)) {
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl_, host.c_str());
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
  }
  for (;;) {
    const int rc = SSL_connect(ssl_);
    if (rc == 1) return true;
    const int e = SSL_get_error(ssl_, rc);
    short events = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (!events) {
      const long verify = SSL_get_verify_result(ssl_);
      why = verify != X509_V_OK ? std::string("TLS: the server's certificate is refused: ") +
                                      X509_verify_cert_error_string(verify)
                                : "TLS handshake: " + ssl_error_text();
      return false;
    }
    if (!wait(events, deadline, why)) return false;
  }
}

bool RedisConnection::wait(short events, Clock::time_point deadline, std::string& why) {
  for (;;) {
    pollfd p{fd_, events, 0};
    const int rc = ::poll(&p, 1, millis_until(deadline));
    if (rc > 0) return true;
    if (rc == 0) return why = "no answer within the time allowed", false;
    if (errno != EINTR) return why = std::string("poll: ") + std::strerror(errno), false;
  }
}

long RedisConnection::read_some(char* buf, size_t n, short& events, std::string& why) {
  if (ssl_) {
    const int rc = SSL_read(ssl_, buf, static_cast<int>(std::min<size_t>(n, 1 << 30)));
    if (rc > 0) return rc;
    const int e = SSL_get_error(ssl_, rc);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
      return 0;
    }
    why = e == SSL_ERROR_ZERO_RETURN ? "the server closed the connection" : "TLS: " + ssl_error_text();
    return -1;
  }
  const ssize_t rc = ::recv(fd_, buf, n, 0);
  if (rc > 0) return rc;
  if (rc < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    events = POLLIN;
    return 0;
  }
  why = rc == 0 ? "the server closed the connection" : std::strerror(errno);
  return -1;
}

long RedisConnection::write_some(const char* buf, size_t n, short& events, std::string& why) {
  if (ssl_) {
    const int rc = SSL_write(ssl_, buf, static_cast<int>(std::min<size_t>(n, 1 << 30)));
    if (rc > 0) return rc;
    const int e = SSL_get_error(ssl_, rc);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
      return 0;
    }
    why = "TLS: " + ssl_error_text();
    return -1;
  }
  const ssize_t rc = ::send(fd_, buf, n, MSG_NOSIGNAL);
  if (rc >= 0) return rc;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
    events = POLLOUT;
    return 0;
  }
  why = std::strerror(errno);
  return -1;
}

bool RedisConnection::send_all(const std::string& bytes, Clock::time_point deadline, std::string& why) {
  size_t done = 0;
  while (done < bytes.size()) {
    short events = 0;
    const long n = write_some(bytes.data() + done, bytes.size() - done, events, why);
    if (n < 0) return false;
    if (n == 0 && !wait(events, deadline, why)) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

Reply RedisConnection::command(const std::vector<std::string>& argv, Clock::time_point deadline,
                               size_t max_bulk_bytes, std::string& why) {
  std::vector<const char*> args;
  std::vector<size_t> lens;
  size_t carried = 0;
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
    carried += a.size();
  }
  char* formatted = nullptr;
  const int len = redisFormatCommandArgv(&formatted, static_cast<int>(args.size()), args.data(), lens.data());
  if (len < 0) return why = "out of memory", nullptr;
  const std::string request(formatted, static_cast<size_t>(len));
  redisFreeCommand(formatted);
  deadline += transfer_allowance(carried);
  if (!send_all(request, deadline, why)) return nullptr;

  std::unique_ptr<redisReader, void (*)(redisReader*)> reader(redisReaderCreate(), redisReaderFree);
  if (!reader) return why = "out of memory", nullptr;
  std::string head;  // the reply's first bytes, to see a bulk length before its bytes come
  bool extended = false;
  size_t received = 0;
  char buf[64 << 10];
  for (;;) {
    void* reply = nullptr;
    if (redisReaderGetReply(reader.get(), &reply) != REDIS_OK)
      return why = std::string("the server's reply is not Redis protocol: ") + reader->errstr, nullptr;
    if (reply) return Reply(static_cast<redisReply*>(reply));
    short events = 0;
    const long n = read_some(buf, sizeof buf, events, why);
    if (n < 0) return nullptr;
    if (n == 0) {
      if (!wait(events, deadline, why)) return nullptr;
      continue;
    }
    received += static_cast<size_t>(n);
    if (head.size() < 32) head.append(buf, std::min<size_t>(static_cast<size_t>(n), 32 - head.size()));
    if (!extended) {
      const long long bulk = announced_bulk(head);
      if (bulk >= 0 && static_cast<unsigned long long>(bulk) > max_bulk_bytes)
        return why = "the server announced a value of " + std::to_string(bulk) + " bytes, more than the " +
                     std::to_string(max_bulk_bytes) + " allowed; not read",
               nullptr;
      if (bulk >= 0) deadline += transfer_allowance(static_cast<size_t>(bulk));
      if (bulk != -2) extended = true;
    }
    if (received > max_bulk_bytes + (64u << 10))
      return why = "the server's reply grew past " + std::to_string(max_bulk_bytes) + " bytes; not read", nullptr;
    if (redisReaderFeed(reader.get(), buf, static_cast<size_t>(n)) != REDIS_OK)
      return why = "out of memory", nullptr;
  }
}

}  // namespace kiln::cache
