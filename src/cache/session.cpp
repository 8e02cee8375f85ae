#include "cache/session.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>

#include "cache/remote/remote.h"
#include "cache/safety.h"
#include "kiln/base/error.h"
#include "kiln/base/printable.h"

namespace kiln::cache {

void warn_once(const std::string& message) {
  static std::mutex mu;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> g(mu);
  // Warnings name files, keys and servers' answers: printed escaped (kiln/base/printable.h).
  if (seen.insert(message).second) std::fprintf(stderr, "kiln: warning: %s\n", printable(message).c_str());
}

Session::Session(CacheSettings settings, KeyIngredients ingredients)
    : settings_(std::move(settings)), ingredients_(std::move(ingredients)), key_(ingredients_.key()) {
  std::string why = prepare_cache_root(settings_.dir);
  if (why.empty()) {
    auto store = std::make_unique<Store>(settings_.dir);
    why = store->prepare_prefix(key_);
    if (why.empty()) store_ = std::move(store);
  }
  if (!why.empty()) {
    if (settings_.strict)
      KILN_THROW(ConfigError) << "[graph_compiler_cache_dir] " << why << " (cache_strict is set, so this fails the run)";
    warn_once("[graph_compiler_cache_dir] " + why + "; compiling without the cache");
    note_ = why;
  }
  if (store_) remote_ = RemoteCache::of(settings_);
}

void Session::problem(const std::string& reason, bool cache_broken) {
  if (cache_broken && settings_.strict) KILN_THROW(ConfigError) << "[graph_compiler_cache_dir] " << reason << " (cache_strict is set)";
  std::fprintf(stderr, "kiln: warning: [graph_compiler_cache_dir] %s\n", reason.c_str());
  note_ += (note_.empty() ? "" : "; ") + reason;
}

void Session::damaged(const EntryCheck& c) {
  entry_ours_to_replace_ = c.ours;
  problem("entry " + key_ + " not loaded: " + c.reason +
              (c.ours ? "; compiling and replacing it" : "; compiling without storing (not ours to replace)"),
          false);
}

std::optional<std::string> Session::find() {
  if (!store_) return std::nullopt;
  EntryCheck c = store_->check(key_);
  if (c.state == EntryCheck::State::ok) {
    outcome_ = CacheOutcome::hit;
    hit_meta_ = std::move(c.meta);
    return store_->object_path(key_);
  }
  // Not there (or bad): take the key's lock; whoever held it may have just stored it.
  lock_ = std::make_unique<KeyLock>(store_->lock_path(key_));
  if (!lock_->acquire(settings_.lock_timeout_seconds))
    problem(lock_->error().empty()
                ? "timed out waiting for another process to compile entry " + key_ + "; compiling privately"
                : "cannot lock entry " + key_ + ": " + lock_->error() + "; compiling privately",
            false);
  if (lock_->held()) c = store_->check(key_);
  if (c.state == EntryCheck::State::ok) {
    lock_.reset();
    outcome_ = CacheOutcome::hit;
    hit_meta_ = std::move(c.meta);
    return store_->object_path(key_);
  }
  outcome_ = CacheOutcome::miss;
  if (c.state == EntryCheck::State::bad) damaged(c);
  if (entry_ours_to_replace_ && (!lock_ || lock_->held()))
    if (auto path = find_remote()) return path;
  return std::nullopt;
}

std::optional<std::string> Session::find_remote() {
  if (!remote_) return std::nullopt;
  std::string why;
  const std::optional<std::string> value = remote_->get(key_, &why);
  if (!value && why.empty()) return std::nullopt;
  std::optional<RemoteEntry> entry;
  if (value) entry = open_entry(remote_->secret(), key_, *value, why);
  if (!entry) {
    problem("remote entry " + key_ + " in " + remote_->url() + " not loaded: " + why + "; compiling and replacing it",
            false);
    return std::nullopt;
  }
  // Through a private file into the local store, which checks it as any entry it holds.
  std::error_code ec;
  const std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  std::string path = ((ec ? std::filesystem::path("/tmp") : tmp) / "kiln-remote-XXXXXX").string();
  const int fd = ::mkstemp(path.data());
  if (fd < 0) {
    problem("remote entry " + key_ + " not stored locally: cannot create a temporary file", false);
    return std::nullopt;
  }
  size_t done = 0;
  while (done < entry->object.size()) {
    const ssize_t n = ::write(fd, entry->object.data() + done, entry->object.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const bool written = done == entry->object.size();
  ::close(fd);
  const std::string stored = written ? store_->publish(key_, path, std::move(entry->meta)) : "cannot write a temporary file";
  ::unlink(path.c_str());
  EntryCheck c = stored.empty() ? store_->check(key_) : EntryCheck{};
  if (c.state != EntryCheck::State::ok) {
    problem("remote entry " + key_ + " could not be stored locally: " + (stored.empty() ? c.reason : stored), false);
    return std::nullopt;
  }
  lock_.reset();
  outcome_ = CacheOutcome::hit;
  remote_hit_ = true;
  hit_meta_ = std::move(c.meta);
  return store_->object_path(key_);
}

void Session::publish_remote(const std::string& object_file, const nlohmann::json& meta) {
  if (!remote_) return;
  std::ifstream in(object_file, std::ios::binary);
  const std::string object((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) return;
  remote_->put(key_, sign_entry(remote_->secret(), key_, meta, object));
}

void Session::reject(const std::string& reason) {
  EntryCheck c;
  c.state = EntryCheck::State::bad;
  c.ours = true;
  c.reason = reason;
  outcome_ = CacheOutcome::miss;
  lock_ = std::make_unique<KeyLock>(store_->lock_path(key_));
  lock_->acquire(settings_.lock_timeout_seconds);
  damaged(c);
}

void Session::loaded() {
  if (store_ && outcome_ == CacheOutcome::hit) store_->touch(key_, hit_meta_);
}

void Session::publish(const std::string& object_file, nlohmann::json meta) {
  if (!store_ || outcome_ != CacheOutcome::miss) return;
  if (!entry_ours_to_replace_ || (lock_ && !lock_->held())) return;  // compiled privately
  meta["ingredients"] = ingredients_.to_json();
  meta["kiln_version"] = KILN_VERSION;
  publish_remote(object_file, meta);
  const std::string why = store_->publish(key_, object_file, std::move(meta));
  lock_.reset();
  if (!why.empty()) {
    outcome_ = CacheOutcome::error;
    problem("cannot store entry " + key_ + ": " + why, true);
    return;
  }
  store_->evict(settings_.size_cap_bytes, key_);
  store_->clean_staging(3600);
}

}  // namespace kiln::cache
