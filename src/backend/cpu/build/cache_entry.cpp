#include "backend/cpu/build/cache_entry.h"

#include <chrono>
#include <fstream>
#include <iterator>

#include "backend/cpu/run/abi.h"
#include "kiln/backend/cpu_features.h"
#include "kiln/base/error.h"

namespace kiln::cpu {

std::string read_object_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) KILN_THROW(SystemError) << "[compile] cannot read the object file " << path;
  return bytes;
}

cache::KeyIngredients cache_key_ingredients(const std::string& canonical_text, PrecisionPolicy policy,
                                            std::string_view generated_source, const Toolchain& tc) {
  const CpuFeatures& cpu = cpu_features();
  std::string flags;
  for (const auto& f : tc.flags) flags += (flags.empty() ? "" : " ") + f;
  flags += " | link:";
  for (const auto& f : tc.link_flags) flags += " " + f;
  cache::KeyIngredients k;
  k.add("cache_format", "1");
  k.add("kiln_version", KILN_VERSION);
  k.add("abi_version", std::to_string(kAbiVersion));
  // The full text goes into the key through its own 128-bit hash; the metadata keeps the
  // hash (the text itself can be megabytes).
  k.add("graph", cache::hash_hex(canonical_text));
  k.add("precision_policy", std::string(precision_policy_name(policy)));
  k.add("source", cache::hash_hex(generated_source));
  k.add("compiler", tc.cxx);
  k.add("compiler_identity", tc.identity);
  k.add("compiler_flags", flags);
  k.add("cpu_model", cpu.model);
  k.add("cpu_isa", cpu.isa());
  return k;
}

std::unique_ptr<SharedObject> load_cached(cache::Session& session, const std::string& identity, CompileReport& report,
                                          std::string* bytes) {
  const auto start = std::chrono::steady_clock::now();  // the lookup and checksum count as load time
  const auto path = session.find();
  if (!path) return nullptr;
  try {
    auto object = std::make_unique<SharedObject>(*path, identity);
    if (bytes) *bytes = read_object_file(*path);
    report.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    session.loaded();
    return object;
  } catch (const SystemError& e) {
    session.reject(std::string("it cannot be loaded: ") + e.what());
    return nullptr;
  }
}

nlohmann::json entry_metadata(const CompileReport& report, const Graph& graph, PrecisionPolicy policy,
                              size_t source_bytes) {
  nlohmann::json meta;
  meta["seconds"] = {{"passes", report.passes_seconds},
                     {"codegen", report.codegen_seconds},
                     {"compile", report.compile_seconds},
                     {"load", report.load_seconds}};
  meta["sizes"] = {{"source", static_cast<int64_t>(source_bytes)}};
  meta["graph"] = {{"nodes", graph.size()}, {"outputs", static_cast<int64_t>(graph.outputs().size())}};
  meta["precision_policy"] = std::string(precision_policy_name(policy));
  meta["kernels"] = report.kernels;
  meta["library_calls"] = report.library_calls;
  meta["arena_bytes"] = report.arena_bytes;
  return meta;
}

}  // namespace kiln::cpu
