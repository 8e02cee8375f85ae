// Errors. User mistakes (bad configuration, bad graph, bad data) are exceptions derived
// from kiln::Error whose message starts with the context in brackets, e.g.
//   [accelerate_train_mode] ratio '0.95' is out of range 0.2..0.9 for split 'step'
// Bugs inside kiln are KILN_CHECK failures (kiln::InternalError).
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace kiln {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// A run configuration that is invalid (option, value given, what is valid).
class ConfigError : public Error {
 public:
  using Error::Error;
};
// A graph that is malformed: bad shapes, dtypes, dangling inputs, unknown names.
class GraphError : public Error {
 public:
  using Error::Error;
};
// Input data that is missing, truncated or corrupt.
class DataError : public Error {
 public:
  using Error::Error;
};
// A checkpoint or model_dir that cannot be used: corrupt, from another model, not
// writable. A user-input problem: `kiln train` exits with status 2.
class CheckpointError : public Error {
 public:
  using Error::Error;
};
// An operating-system or library failure (file I/O, oneDNN).
class SystemError : public Error {
 public:
  using Error::Error;
};
// A broken internal invariant: a bug in kiln, not in the user's input.
class InternalError : public Error {
 public:
  using Error::Error;
};

namespace detail {
// Collects a message with operator<< and throws on destruction.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* cond) {
    os_ << file << ":" << line << ": check failed: " << cond << ": ";
  }
  template <class T>
  CheckFailure& operator<<(const T& v) {
    os_ << v;
    return *this;
  }
  [[noreturn]] ~CheckFailure() noexcept(false) { throw InternalError(os_.str()); }

 private:
  std::ostringstream os_;
};

// Builds an error message with operator<< and throws it as E.
template <class E>
class Thrower {
 public:
  Thrower() = default;
  explicit Thrower(const std::string& prefix) { os_ << prefix; }
  Thrower(const Thrower&) = delete;
  template <class T>
  Thrower& operator<<(const T& v) {
    os_ << v;
    return *this;
  }
  [[noreturn]] ~Thrower() noexcept(false) { throw E(os_.str()); }

 private:
  std::ostringstream os_;
};
}  // namespace detail
}  // namespace kiln

#define KILN_CHECK(cond) \
  if (cond) {            \
  } else                 \
    ::kiln::detail::CheckFailure(__FILE__, __LINE__, #cond)

// KILN_THROW(GraphError) << "[matmul] ..."; throws kiln::GraphError with that message.
#define KILN_THROW(E) ::kiln::detail::Thrower<::kiln::E>()
