#include "cache/store.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cache/entry_meta.h"
#include "cache/key.h"
#include "cache/layout.h"
#include "cache/safety.h"
#include "process/failpoint.h"

namespace kiln::cache {
namespace fs = std::filesystem;

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

namespace {

// Writes `text` to `path` and fsyncs it; false on any failure.
bool write_synced(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n == 0 ? EIO : errno;  // what callers report: not close()'s
      ::close(fd);
      errno = err;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  const bool ok = ::fsync(fd) == 0;
  const int err = errno;
  const bool closed = ::close(fd) == 0;
  if (!ok) errno = err;
  return closed && ok;
}

bool read_all(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

int64_t dir_bytes(const std::string& dir) {
  int64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) total += static_cast<int64_t>(it->file_size(e2));
  }
  return total;
}

}  // namespace

Store::Store(std::string root) : root_(fs::path(std::move(root)).lexically_normal().string()) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string Store::entry_dir(const std::string& key) const { return root_ + "/" + key.substr(0, 2) + "/" + key; }
std::string Store::object_path(const std::string& key) const { return entry_dir(key) + "/" + kObjectFile; }
std::string Store::lock_path(const std::string& key) const { return entry_dir(key) + ".lock"; }

std::string Store::make_staging(const std::string& key, std::string& why) const {
  const std::string tmp = root_ + "/" + kStagingDir;
  why = ensure_private_dir(tmp);
  if (!why.empty()) return {};
  std::string tmpl = tmp + "/" + staging_template(key);
  if (!::mkdtemp(tmpl.data())) {
    why = "cannot create a staging directory in " + tmp + ": " + std::strerror(errno);
    return {};
  }
  return tmpl;
}

std::string Store::prepare_prefix(const std::string& key) const {
  return ensure_private_dir(root_ + "/" + key.substr(0, 2));
}

EntryCheck Store::check(const std::string& key) const {
  EntryCheck c;
  const std::string dir = entry_dir(key);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return c;  // absent
  c.state = EntryCheck::State::bad;
  c.ours = st.st_uid == ::geteuid();
  const auto bad = [&](std::string why) {
    c.reason = std::move(why);
    return c;
  };
  std::string why = unsafe_reason(root_ + "/" + key.substr(0, 2), PathKind::directory);
  if (!why.empty()) {
    c.ours = false;  // removing from a directory we do not trust is not ours to do
    return bad(why);
  }
  if (!(why = unsafe_reason(dir, PathKind::directory)).empty()) return bad(why);
  const std::string meta_path = dir + "/" + kMetaFile, so = dir + "/" + kObjectFile;
  if (!(why = unsafe_reason(meta_path, PathKind::file)).empty()) return bad("metadata: " + why);
  if (!(why = unsafe_reason(so, PathKind::file)).empty()) return bad("object: " + why);
  std::string text;
  if (!read_all(meta_path, text)) return bad(meta_path + " cannot be read");
  EntryMeta meta = parse_entry_meta(text, key, meta_path);
  if (!meta.problem.empty()) return bad(meta.problem);
  std::string bytes;
  if (!read_all(so, bytes)) return bad(so + " cannot be read");
  if (static_cast<int64_t>(bytes.size()) != meta.object_bytes)
    return bad(so + " has " + std::to_string(bytes.size()) + " bytes, the metadata says " +
               std::to_string(meta.object_bytes) + " (truncated?)");
  if (hash_hex(bytes) != meta.checksum) return bad(so + " fails its checksum (corrupted)");
  c.state = EntryCheck::State::ok;
  c.ours = true;
  c.meta = std::move(meta.json);
  return c;
}

std::string Store::publish(const std::string& key, const std::string& object_file, nlohmann::json meta) const {
  std::string why = prepare_prefix(key);
  if (!why.empty()) return why;
  const std::string staging = make_staging(key, why);
  if (staging.empty()) return why;
  const auto fail = [&](std::string reason) {
    std::error_code ec;
    fs::remove_all(staging, ec);
    return reason;
  };
  std::string bytes;
  if (!read_all(object_file, bytes)) return fail("cannot read the compiled object " + object_file);
  failpoint("KILN_CACHE_FAILPOINT", "staging");
  if (!write_synced(staging + "/" + kObjectFile, bytes))
    return fail("cannot write " + staging + "/" + kObjectFile + ": " + std::strerror(errno) + " (disk full?)");
  const double now = unix_now();
  meta["key"] = key;
  meta["sizes"]["object"] = static_cast<int64_t>(bytes.size());
  meta["checksum"] = hash_hex(bytes);
  meta["checksum_algorithm"] = "xxh3-128";
  meta["created"] = now;
  meta["last_used"] = now;
  meta["hits"] = 0;
  if (!write_synced(staging + "/" + kMetaFile, meta.dump(2) + "\n"))
    return fail("cannot write the entry metadata in " + staging + ": " + std::strerror(errno) + " (disk full?)");
  if (!sync_path(staging)) return fail("cannot fsync " + staging);
  failpoint("KILN_CACHE_FAILPOINT", "before_rename");
  const std::string dir = entry_dir(key);
  struct stat st {};
  std::string old_why;
  if (::lstat(dir.c_str(), &st) == 0 && !remove(key, &old_why)) return fail("cannot replace the old entry: " + old_why);
  if (::rename(staging.c_str(), dir.c_str()) != 0)
    return fail("cannot publish " + dir + ": " + std::strerror(errno));
  sync_path(root_ + "/" + key.substr(0, 2));
  return {};
}

void Store::touch(const std::string& key, nlohmann::json meta) const {
  meta["last_used"] = unix_now();
  meta["hits"] = meta_count(meta, "hits").value_or(0) + 1;
  const std::string dir = entry_dir(key);
  std::string tmpl = dir + "/.meta.XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd >= 0) {
    ::close(fd);
    if (write_synced(tmpl, meta.dump(2) + "\n") && ::rename(tmpl.c_str(), (dir + "/" + kMetaFile).c_str()) == 0) return;
  }
  // The entry itself is intact (the old metadata stays); only its hit statistics are lost.
  const int err = errno;
  if (fd >= 0) ::unlink(tmpl.c_str());
  std::fprintf(stderr, "kiln: warning: [graph_compiler_cache_dir] cannot record the hit of entry %s (its use statistics "
               "stay as they were): %s\n", key.c_str(), std::strerror(err));
}

std::vector<EntryInfo> Store::scan() const {
  std::vector<EntryInfo> out;
  std::error_code ec;
  for (fs::directory_iterator p(root_, ec), end; !ec && p != end; p.increment(ec)) {
    const std::string prefix = p->path().filename().string();
    std::error_code ec1;
    if (!is_prefix_name(prefix) || !fs::is_directory(fs::symlink_status(p->path(), ec1))) continue;
    std::error_code ec2;
    for (fs::directory_iterator e(p->path(), ec2); !ec2 && e != end; e.increment(ec2)) {
      const std::string key = e->path().filename().string();
      if (!is_entry_name(prefix, key)) continue;
      EntryInfo info;
      info.key = key;
      info.dir = e->path().string();
      std::error_code ec3;
      if (!e->is_symlink(ec3)) info.bytes = dir_bytes(info.dir);
      std::string text;
      std::optional<double> last_used;
      if (read_all(info.dir + "/" + kMetaFile, text)) {
        EntryMeta meta = parse_entry_meta(text, key, info.dir + "/" + kMetaFile);
        info.meta = std::move(meta.json);
        last_used = meta.last_used;
      }
      if (last_used) {
        info.last_used = *last_used;
      } else {
        struct stat st {};
        if (::lstat(info.dir.c_str(), &st) == 0) info.last_used = static_cast<double>(st.st_mtime);
      }
      out.push_back(std::move(info));
    }
  }
  std::sort(out.begin(), out.end(), [](const EntryInfo& a, const EntryInfo& b) { return a.key < b.key; });
  return out;
}

int64_t Store::total_bytes() const {
  int64_t total = 0;
  for (const auto& e : scan()) total += e.bytes;
  return total;
}

}  // namespace kiln::cache
