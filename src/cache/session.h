// One compile's use of the cache: find a verified entry for the key (waiting for another
// process that is compiling it), or compile and publish. A cache that cannot work warns
// once per directory and the compile goes on without it, unless strict (ConfigError).
#pragma once
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cache/key.h"
#include "cache/lock.h"
#include "cache/store.h"
#include "kiln/cache/cache_settings.h"

namespace kiln::cache {

class Session {
 public:
  // Prepares the root directory. Throws ConfigError in strict mode if the cache cannot work.
  Session(CacheSettings settings, KeyIngredients ingredients);

  bool usable() const { return store_ != nullptr; }
  const std::string& key() const { return key_; }
  // off (no usable cache), hit, miss, or error (a store failed).
  CacheOutcome outcome() const { return outcome_; }
  // Warnings about this key (damaged entry replaced, store failed), for the report.
  const std::string& note() const { return note_; }

  // Whether find()'s hit came from the remote tier (cache/remote/remote.h).
  bool remote_hit() const { return remote_hit_; }
  // The path of a verified shared object to load, or nullopt: compile, then publish().
  // Looks in the local store, then in the remote tier (a verified remote entry is stored
  // locally first, through the local store's checks).
  // On nullopt the key lock is held (unless the wait timed out), so others wait for us.
  std::optional<std::string> find();
  // Lets go of the key lock find() holds on a miss, so that processes sharing the
  // directory do not wait for this one (a data-parallel rank about to wait in a collective:
  // backend/cpu/build/job_share.h); a later publish() stores without it (atomically, as
  // ever).
  void unlock() { lock_.reset(); }
  // The entry find() returned could not be loaded: treat it as damaged.
  void reject(const std::string& reason);
  // Records the hit (last-used time, hit count).
  void loaded();
  // Stores the compiled object, then evicts down to the cap. Never throws unless strict.
  void publish(const std::string& object_file, nlohmann::json meta);

 private:
  // Warns (and records the note); throws ConfigError when strict and cache_broken.
  void problem(const std::string& reason, bool cache_broken);
  void damaged(const EntryCheck& c);
  // A verified remote entry stored locally: its local path, or nullopt.
  std::optional<std::string> find_remote();
  void publish_remote(const std::string& object_file, const nlohmann::json& meta);

  CacheSettings settings_;
  KeyIngredients ingredients_;
  std::string key_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<KeyLock> lock_;
  CacheOutcome outcome_ = CacheOutcome::off;
  std::string note_;
  nlohmann::json hit_meta_;
  bool entry_ours_to_replace_ = true;
  class RemoteCache* remote_ = nullptr;
  bool remote_hit_ = false;
};

// Prints "kiln: warning: <message>" on stderr the first time this message is seen.
void warn_once(const std::string& message);

}  // namespace kiln::cache
