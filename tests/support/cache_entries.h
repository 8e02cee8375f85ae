// Tampering with a compile-cache entry as a careless or hostile writer could: replace its
// object and fix its metadata (size, checksum) so every check of the store passes.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cache/key.h"
#include "cache/store.h"
#include "support/temp_files.h"

namespace testkit {

inline void replace_entry_object(const std::filesystem::path& cache_dir, const std::string& key,
                                 const std::string& bytes) {
  namespace fs = std::filesystem;
  const kiln::cache::Store store(cache_dir.string());
  const fs::path so = store.object_path(key), meta_path = fs::path(store.entry_dir(key)) / kiln::cache::kMetaFile;
  fs::permissions(so, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(so, std::ios::binary | std::ios::trunc) << bytes;
  fs::permissions(so, fs::perms::owner_write, fs::perm_options::remove);
  nlohmann::json meta = nlohmann::json::parse(read_file(meta_path));
  meta["checksum"] = kiln::cache::hash_hex(bytes);
  meta["sizes"]["object"] = static_cast<int64_t>(bytes.size());
  fs::permissions(meta_path, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(meta_path, std::ios::trunc) << meta.dump();
  fs::permissions(meta_path, fs::perms::owner_write, fs::perm_options::remove);
}

}  // namespace testkit
