// The remote tier's connection against servers that misbehave on purpose (a loopback
// socket served by a thread of this test): one that trickles its reply, one that announces
// a huge value, one that answers slowly every time (the job's budget), one that is not
// Redis at all. Every wait is bounded; nothing is allocated for a value that is refused.
// The real redis-server (AUTH, TLS, a whole job) is tests/cache/remote_cache.py.
#include "cache/remote/redis_connection.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "cache/remote/remote.h"
#include "kiln/base/error.h"

namespace kiln::cache {
namespace {

using namespace std::chrono_literals;

// A loopback server: each connection is handed to `serve` (on its own thread) with the
// socket; the test's end closes everything.
class FakeServer {
 public:
  explicit FakeServer(std::function<void(int)> serve) : serve_(std::move(serve)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ::listen(fd_, 8);
    accept_ = std::thread([this] {
      for (;;) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0 || stop_) {
          if (c >= 0) ::close(c);
          return;
        }
        clients_.emplace_back([this, c] {
          serve_(c);
          ::close(c);
        });
      }
    });
  }
  ~FakeServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    accept_.join();
    for (auto& t : clients_) t.join();
  }
  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

 private:
  std::function<void(int)> serve_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread accept_;
  std::vector<std::thread> clients_;
};

// The bytes of one command as the client sent them (enough for these tests: each command
// arrives in one piece on loopback).
std::string read_command(int fd) {
  char buf[4096];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

void send_text(int fd, const std::string& s) { (void)::send(fd, s.data(), s.size(), MSG_NOSIGNAL); }

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

TEST(RedisConnection, AWholeReplyHasOneDeadlineNotEachByte) {
  std::atomic<bool> done{false};
  FakeServer server([&](int fd) {
    read_command(fd);
    send_text(fd, "$200\r\n");
    for (int i = 0; i < 200 && !done; ++i) {  // one byte every 50 ms: 10 s in all
      send_text(fd, "x");
      std::this_thread::sleep_for(50ms);
    }
  });
  std::string why;
  auto c = RedisConnection::open("127.0.0.1", server.port(), {}, Clock::now() + 1s, why);
  ASSERT_TRUE(c) << why;
  const auto t0 = Clock::now();
  Reply r = c->command({"GET", "k"}, Clock::now() + 300ms, 1 << 20, why);
  const double waited = seconds_since(t0);
  done = true;
  EXPECT_FALSE(r);
  EXPECT_NE(why.find("no answer within the time allowed"), std::string::npos) << why;
  EXPECT_LT(waited, 1.5) << "each byte came in time, but the whole reply did not";
}

TEST(RedisConnection, AHugeValueIsRefusedByItsAnnouncedLengthUnread) {
  std::atomic<bool> done{false};
  FakeServer server([&](int fd) {
    read_command(fd);
    send_text(fd, "$5000000000\r\n");  // 5 GB announced; a few bytes sent
    send_text(fd, std::string(1000, 'x'));
    while (!done) std::this_thread::sleep_for(10ms);
  });
  std::string why;
  auto c = RedisConnection::open("127.0.0.1", server.port(), {}, Clock::now() + 1s, why);
  ASSERT_TRUE(c) << why;
  const auto t0 = Clock::now();
  Reply r = c->command({"GET", "k"}, Clock::now() + 2s, 1 << 20, why);
  done = true;
  EXPECT_FALSE(r);
  EXPECT_NE(why.find("announced a value of 5000000000 bytes, more than the 1048576 allowed"), std::string::npos)
      << why;
  EXPECT_LT(seconds_since(t0), 1.0) << "refused at the header, not after waiting for the bytes";
}

TEST(RedisConnection, AReplyGrowingPastTheLimitInPiecesIsRefused) {
  std::atomic<bool> done{false};
  FakeServer server([&](int fd) {
    read_command(fd);
    send_text(fd, "*100000\r\n");  // many small strings, together far past the limit
    const std::string item = "$1000\r\n" + std::string(1000, 'k') + "\r\n";
    for (int i = 0; i < 2000 && !done; ++i) send_text(fd, item);
    while (!done) std::this_thread::sleep_for(10ms);
  });
  std::string why;
  auto c = RedisConnection::open("127.0.0.1", server.port(), {}, Clock::now() + 1s, why);
  ASSERT_TRUE(c) << why;
  Reply r = c->command({"SCAN", "0"}, Clock::now() + 5s, 1 << 20, why);
  done = true;
  EXPECT_FALSE(r);
  EXPECT_NE(why.find("grew past 1048576 bytes"), std::string::npos) << why;
}

TEST(RedisConnection, ConnectingToAServerThatNeverAcceptsHasADeadline) {
  // A TLS handshake with a server that accepts the connection and says nothing.
  std::atomic<bool> done{false};
  FakeServer server([&](int) {
    while (!done) std::this_thread::sleep_for(10ms);
  });
  std::string why;
  const auto t0 = Clock::now();
  auto c = RedisConnection::open("127.0.0.1", server.port(), TlsOptions{true, "", ""}, Clock::now() + 300ms, why);
  done = true;
  EXPECT_FALSE(c);
  EXPECT_NE(why.find("no answer within the time allowed"), std::string::npos) << why;
  EXPECT_LT(seconds_since(t0), 1.5);
}

TEST(RemoteCache, TheJobsRemoteTimeHasABudgetThenTheRemoteIsOff) {
  // Every answer comes in 300 ms, each within the 1 s a command may take; the budget of
  // 1 s for the job ends the remote after a few.
  std::atomic<int> answered{0};
  FakeServer server([&](int fd) {
    while (!read_command(fd).empty()) {
      std::this_thread::sleep_for(300ms);
      send_text(fd, "$-1\r\n");
      ++answered;
    }
  });
  RemoteLimits limits;
  limits.command = 1000ms;
  limits.budget = 1000ms;
  RemoteCache remote(server.url(), parse_redis_url(server.url()), std::string(32, 's'), {}, limits);
  const auto t0 = Clock::now();
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(remote.get("k" + std::to_string(i)));
  const double waited = seconds_since(t0);
  EXPECT_LT(waited, 2.0) << "20 lookups of 300 ms each, but the budget is 1 s";
  EXPECT_LE(answered.load(), 4);
  EXPECT_THROW(remote.keys(), SystemError);  // off for the rest of the process
}

TEST(RemoteCache, AValueTooLargeIsRefusedUnreadAndTheRemoteStaysOn) {
  std::atomic<int> connections{0};
  FakeServer server([&](int fd) {
    ++connections;
    for (std::string c; !(c = read_command(fd)).empty();) {
      if (c.find("big") != std::string::npos) send_text(fd, "$999999999999\r\n");
      else send_text(fd, "$2\r\nok\r\n");
    }
  });
  RemoteLimits limits;
  limits.max_value_bytes = 1000;
  RemoteCache remote(server.url(), parse_redis_url(server.url()), std::string(32, 's'), {}, limits);
  std::string refused;
  EXPECT_FALSE(remote.get("big", &refused));
  EXPECT_NE(refused.find("announced a value of 999999999999 bytes, more than the 1000 allowed"), std::string::npos)
      << refused;
  EXPECT_FALSE(remote.off());
  EXPECT_EQ(remote.get("small", &refused), std::optional<std::string>("ok"));
  EXPECT_EQ(refused, "");
  EXPECT_EQ(connections.load(), 2) << "the refused value's connection is closed, a new one made";
}

TEST(RemoteCache, ANonRedisScanReplyIsAClearError) {
  for (const std::string reply : {"+OK\r\n", "*2\r\n:5\r\n:3\r\n", "*2\r\n$1\r\nx\r\n*0\r\n",
                                  "*2\r\n$1\r\n0\r\n*1\r\n:7\r\n"}) {
    FakeServer server([&](int fd) {
      if (!read_command(fd).empty()) send_text(fd, reply);
    });
    RemoteCache remote(server.url(), parse_redis_url(server.url()), std::string(32, 's'));
    try {
      remote.keys();
      ADD_FAILURE() << "no error for " << reply;
    } catch (const SystemError& e) {
      EXPECT_NE(std::string(e.what()).find("is this a Redis server?"), std::string::npos) << e.what();
    }
  }
}

TEST(RemoteCache, KeysOutsideKilnsPrefixAreNotListed) {
  FakeServer server([&](int fd) {
    if (!read_command(fd).empty())
      send_text(fd, "*2\r\n$1\r\n0\r\n*2\r\n$5\r\nother\r\n$14\r\nkiln:entry:abc\r\n");
  });
  RemoteCache remote(server.url(), parse_redis_url(server.url()), std::string(32, 's'));
  EXPECT_EQ(remote.keys(), std::vector<std::string>{"abc"});
}

TEST(RemoteCache, AuthenticatesAsTheUserOfTheAddressBeforeTheFirstCommand) {
  std::vector<std::string> seen;
  std::mutex mu;
  FakeServer server([&](int fd) {
    for (std::string c; !(c = read_command(fd)).empty();) {
      {
        std::lock_guard<std::mutex> g(mu);
        seen.push_back(c);
      }
      send_text(fd, c.find("AUTH") != std::string::npos ? "+OK\r\n" : "$-1\r\n");
    }
  });
  const std::string url = "redis://alice@127.0.0.1:" + std::to_string(server.port());
  RemoteCache remote(url, parse_redis_url(url), std::string(32, 's'), RemoteCredentials{"s3cret", "", ""});
  EXPECT_FALSE(remote.get("k"));
  std::lock_guard<std::mutex> g(mu);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], "*3\r\n$4\r\nAUTH\r\n$5\r\nalice\r\n$6\r\ns3cret\r\n");
  EXPECT_NE(seen[1].find("GET"), std::string::npos);
}

TEST(RemoteCache, ARefusedPasswordWarnsAndTurnsTheRemoteOff) {
  FakeServer server([&](int fd) {
    for (std::string c; !(c = read_command(fd)).empty();)
      send_text(fd, "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  });
  RemoteCache remote(server.url(), parse_redis_url(server.url()), std::string(32, 's'),
                     RemoteCredentials{"wrong", "", ""});
  EXPECT_FALSE(remote.get("k"));
  try {
    remote.keys();
    ADD_FAILURE();
  } catch (const SystemError& e) {
    EXPECT_NE(std::string(e.what()).find("the server refused the password: WRONGPASS"), std::string::npos) << e.what();
  }
}

TEST(RedisUrl, UsersTlsAndNoPasswords) {
  RedisAddress a = parse_redis_url("rediss://cache@redis.example:6380/2");
  EXPECT_TRUE(a.tls);
  EXPECT_EQ(a.user, "cache");
  EXPECT_EQ(a.host, "redis.example");
  EXPECT_EQ(a.port, 6380);
  EXPECT_EQ(a.db, 2);
  a = parse_redis_url("redis://[::1]");
  EXPECT_FALSE(a.tls);
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.user, "");
  try {
    parse_redis_url("redis://cache:hunter2@host");
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("has a password in it"), std::string::npos) << m;
    EXPECT_EQ(m.find("hunter2"), std::string::npos) << "the password is not repeated: " << m;
    EXPECT_NE(m.find("KILN_REMOTE_CACHE_PASSWORD_FILE"), std::string::npos) << m;
  }
  EXPECT_THROW(parse_redis_url("redis://@host"), ConfigError);
  EXPECT_THROW(parse_redis_url("http://host"), ConfigError);
}

}  // namespace
}  // namespace kiln::cache
