// The compile-cache key: a 128-bit XXH3 hash over everything that determines the compiled
// code (and nothing else: no paths of temporary directories, no times, no pointers).
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/precision.h"

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

// The ingredients for compiling `canonical_text` (print_graph(g, TextForm::canonical))
// with `policy` on this machine: kiln version, codegen ABI, compiler path, identity and
// flags (host_toolchain()), CPU model and ISA, and the hash of the C++ source kiln
// generated for it. The source makes the key follow every change to kiln's passes,
// schedule and code generator, also between builds that share a version number (a stale
// object would disagree with this kiln about buffer layout and arithmetic).
// Throws SystemError if there is no compiler.
KeyIngredients compile_key_ingredients(const std::string& canonical_text, PrecisionPolicy policy,
                                       std::string_view generated_source);

}  // namespace kiln::cache
