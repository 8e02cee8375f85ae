#include "formats/bounded_json.h"
#include "cache/layout.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cache/safety.h"

namespace kiln::cache {
namespace fs = std::filesystem;

namespace {

bool lower_hex(const std::string& s, size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool digits(const std::string& s) {
  return !s.empty() && s.size() <= 10 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// mkdtemp/mkstemp suffixes: six characters of [A-Za-z0-9].
bool temp_suffix(const std::string& s) {
  return s.size() == 6 && std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
}

// Names under `path` that are not kiln's, as "<path>: why"; "" if everything is kiln's.
// Used before adopting a cache without a marker, so it looks at every level kiln writes.
std::string first_foreign(const std::string& root) {
  const auto kind = [](const fs::path& p, std::error_code& ec) { return fs::symlink_status(p, ec).type(); };
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code e2;
    const fs::file_type t = kind(it->path(), e2);
    if (t == fs::file_type::not_found) continue;  // gone meanwhile (another process storing)
    if (is_marker_name(name) && t == fs::file_type::regular) continue;
    if (name == kStagingDir && t == fs::file_type::directory) {
      for (fs::directory_iterator s(it->path(), e2); !e2 && s != end; s.increment(e2)) {
        pid_t pid = 0;
        std::error_code e3;
        const fs::file_type st = kind(s->path(), e3);
        if (st == fs::file_type::not_found) continue;
        if (!parse_staging_name(s->path().filename().string(), pid) || st != fs::file_type::directory)
          return s->path().string() + " is not a name kiln creates";
      }
      if (e2 && e2 != std::errc::no_such_file_or_directory) return it->path().string() + " cannot be listed: " + e2.message();
      continue;
    }
    if (!is_prefix_name(name) || t != fs::file_type::directory) return it->path().string() + " is not a name kiln creates";
    for (fs::directory_iterator e(it->path(), e2); !e2 && e != end; e.increment(e2)) {
      const std::string key = e->path().filename().string();
      std::error_code e3;
      const fs::file_type et = kind(e->path(), e3);
      if (et == fs::file_type::not_found) continue;
      if (is_lock_name(name, key) && et == fs::file_type::regular) continue;
      if (!is_entry_name(name, key) || et != fs::file_type::directory)
        return e->path().string() + " is not a name kiln creates";
      for (fs::directory_iterator f(e->path(), e3); !e3 && f != end; f.increment(e3)) {
        std::error_code e4;
        const fs::file_type ft = kind(f->path(), e4);
        if (ft == fs::file_type::not_found) continue;
        if (!is_entry_file_name(f->path().filename().string()) || ft != fs::file_type::regular)
          return f->path().string() + " is not a file kiln creates";
      }
      if (e3 && e3 != std::errc::no_such_file_or_directory) return e->path().string() + " cannot be listed: " + e3.message();
    }
    if (e2 && e2 != std::errc::no_such_file_or_directory) return it->path().string() + " cannot be listed: " + e2.message();
  }
  if (ec) return root + " cannot be listed: " + ec.message();
  return {};
}

std::string write_marker(const std::string& root) {
  std::string tmp = root + "/" + kMarkerFile + ".XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return "cannot create the cache marker in " + root + ": " + std::strerror(errno);
  const std::string text =
      nlohmann::json{{"format", kMarkerFormat}, {"version", 1}, {"created_by", std::string("kiln ") + KILN_VERSION}}.dump() + "\n";
  size_t done = 0;
  int err = 0;
  while (done < text.size() && !err) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) err = n < 0 ? errno : EIO;
    else done += static_cast<size_t>(n);
  }
  if (!err && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  const std::string marker = root + "/" + kMarkerFile;
  if (!err && ::rename(tmp.c_str(), marker.c_str()) != 0) err = errno;
  if (err) {
    ::unlink(tmp.c_str());
    return "cannot write the cache marker " + marker + ": " + std::strerror(err);
  }
  sync_path(root);
  return {};
}

}  // namespace

bool is_prefix_name(const std::string& name) { return lower_hex(name, 2); }
bool is_key_name(const std::string& name) { return lower_hex(name, 32); }

bool is_lock_name(const std::string& prefix, const std::string& name) {
  return name.size() == 37 && name.compare(32, 5, ".lock") == 0 && is_entry_name(prefix, name.substr(0, 32));
}

bool is_entry_name(const std::string& prefix, const std::string& name) {
  return is_key_name(name) && name.compare(0, 2, prefix) == 0;
}

bool is_entry_file_name(const std::string& name) {
  return name == "step.so" || name == "meta.json" || (name.size() == 12 && name.rfind(".meta.", 0) == 0 && temp_suffix(name.substr(6)));
}

bool is_marker_name(const std::string& name) {
  const std::string m = kMarkerFile;
  return name == m || (name.size() == m.size() + 7 && name.rfind(m + ".", 0) == 0 && temp_suffix(name.substr(m.size() + 1)));
}

bool parse_staging_name(const std::string& name, pid_t& pid) {
  pid = 0;
  // <key>.XXXXXX (older kilns)
  if (name.size() == 39 && name[32] == '.') return is_key_name(name.substr(0, 32)) && temp_suffix(name.substr(33));
  // kiln-<pid>-<key>.XXXXXX
  if (name.rfind("kiln-", 0) != 0 || name.size() < 5 + 2 + 39) return false;
  const size_t dash = name.find('-', 5);
  if (dash == std::string::npos || name.size() != dash + 1 + 39 || name[dash + 33] != '.') return false;
  const std::string p = name.substr(5, dash - 5);
  if (!digits(p) || !is_key_name(name.substr(dash + 1, 32)) || !temp_suffix(name.substr(dash + 34))) return false;
  pid = static_cast<pid_t>(std::stoll(p));
  return pid > 0;
}

std::string staging_template(const std::string& key) {
  return "kiln-" + std::to_string(::getpid()) + "-" + key + ".XXXXXX";
}

std::string marker_problem(const std::string& root) {
  const std::string path = root + "/" + kMarkerFile;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return root + " is not a kiln compile cache: it has no marker (" + kMarkerFile + ")";
    return path + " cannot be examined: " + std::strerror(errno);
  }
  std::string why = unsafe_reason(path, PathKind::file);
  if (!why.empty()) return "the cache marker " + why;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return path + " cannot be read: " + std::strerror(errno);
  char buf[4096];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  const nlohmann::json j =
      parse_bounded_json(std::string_view(buf, n > 0 ? static_cast<size_t>(n) : 0), JsonLimits{sizeof buf, 8});
  if (!j.is_object() || !j.contains("format") || j["format"] != kMarkerFormat)
    return path + " is not kiln's cache marker (it lacks \"format\": \"" + kMarkerFormat + "\")";
  return {};
}

std::string claim_cache_root(const std::string& root) {
  const std::string marker = root + "/" + kMarkerFile;
  struct stat st {};
  if (::lstat(marker.c_str(), &st) == 0 || errno != ENOENT) return marker_problem(root);
  const std::string foreign = first_foreign(root);
  if (!foreign.empty())
    return root + " is not a kiln compile cache (no " + kMarkerFile + " marker) and is not empty: " + foreign +
           ". kiln deletes inside its cache directory, so it only uses an empty or new directory, or one that is "
           "already its cache; give another directory";
  return write_marker(root);
}

}  // namespace kiln::cache
