#include "cache/session.h"

#include <cstdio>
#include <mutex>
#include <set>

#include "cache/safety.h"
#include "kiln/error.h"

namespace kiln::cache {

void warn_once(const std::string& message) {
  static std::mutex mu;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> g(mu);
  if (seen.insert(message).second) std::fprintf(stderr, "kiln: warning: %s\n", message.c_str());
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
  return std::nullopt;
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
