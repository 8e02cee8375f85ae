#include "cache/key.h"

#include <xxhash.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "backend/cpu/abi.h"
#include "backend/cpu/toolchain.h"
#include "kiln/cpu_features.h"
#include "kiln/error.h"

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

KeyIngredients compile_key_ingredients(const std::string& canonical_text, PrecisionPolicy policy,
                                       std::string_view generated_source) {
  const cpu::Toolchain& tc = cpu::host_toolchain();
  const CpuFeatures& cpu = cpu_features();
  std::string flags;
  for (const auto& f : tc.flags) flags += (flags.empty() ? "" : " ") + f;
  KeyIngredients k;
  k.add("cache_format", "1");
  k.add("kiln_version", KILN_VERSION);
  k.add("abi_version", std::to_string(cpu::kAbiVersion));
  // The full text goes into the key through its own 128-bit hash; the metadata keeps the
  // hash (the text itself can be megabytes).
  k.add("graph", hash_hex(canonical_text));
  k.add("precision_policy", std::string(precision_policy_name(policy)));
  k.add("source", hash_hex(generated_source));
  k.add("compiler", tc.cxx);
  k.add("compiler_identity", tc.identity);
  k.add("compiler_flags", flags);
  k.add("cpu_model", cpu.model);
  k.add("cpu_isa", cpu.isa());
  return k;
}

}  // namespace kiln::cache
