// The compile-cache key: a 128-bit XXH3 hash over everything that determines the compiled
// code (and nothing else: no paths of temporary directories, no times, no pointers). The
// cache only hashes named byte strings; what goes in is the backend's business
// (backend/cpu/cache_key.h).
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kiln::cache {

// 32 lowercase hex digits of XXH3-128 over `bytes`.
std::string hash_hex(std::string_view bytes);
// The same over a file's contents; throws SystemError if it cannot be read.
std::string file_hash_hex(const std::string& path);

// The ingredients of a key, in a fixed order, as (name, value) text pairs. Stored in the
// entry's metadata so a user can see why two runs missed.
struct KeyIngredients {
  std::vector<std::pair<std::string, std::string>> items;
  void add(std::string name, std::string value) { items.emplace_back(std::move(name), std::move(value)); }
  // The value of `name`, or "" if absent.
  std::string get(std::string_view name) const;
  nlohmann::json to_json() const;
  // 32 hex digits; each item is hashed as its name, value and their lengths, so that no
  // two different ingredient lists hash the same stream.
  std::string key() const;
};

}  // namespace kiln::cache
