#include "cache/key.h"

#include <xxhash.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "kiln/base/error.h"

namespace kiln::cache {
namespace {

std::string hex_of(XXH128_hash_t h) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

}  // namespace

std::string hash_hex(std::string_view bytes) { return hex_of(XXH3_128bits(bytes.data(), bytes.size())); }

std::string file_hash_hex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) KILN_THROW(SystemError) << "[cache] cannot read " << path;
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) KILN_THROW(SystemError) << "[cache] cannot read " << path;
  return hash_hex(bytes);
}

std::string KeyIngredients::get(std::string_view name) const {
  for (const auto& [n, v] : items)
    if (n == name) return v;
  return {};
}

nlohmann::json KeyIngredients::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [n, v] : items) j[n] = v;
  return j;
}

std::string KeyIngredients::key() const {
  std::string stream;
  for (const auto& [n, v] : items)
    stream += std::to_string(n.size()) + ":" + n + "=" + std::to_string(v.size()) + ":" + v + "\n";
  return hash_hex(stream);
}

}  // namespace kiln::cache
