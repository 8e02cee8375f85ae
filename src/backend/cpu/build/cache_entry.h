// The CPU backend's side of the compile cache: what goes into the key, what an entry's
// metadata says, and loading a hit. The cache itself (src/cache/) only hashes the named
// byte strings it is given and stores files; it knows nothing about compilers or CPUs.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "backend/cpu/run/loader.h"
#include "backend/cpu/build/toolchain.h"
#include "cache/key.h"
#include "cache/session.h"
#include "kiln/backend/compiler.h"

namespace kiln::cpu {

// The ingredients for compiling `canonical_text` (print_graph(g, TextForm::structure):
// the canonical form without hyperparameter values, which the executable supplies)
// with `policy` by `tc` on this machine: kiln version, codegen ABI, compiler path,
// identity and flags, CPU model and ISA, and the hash of the C++ source kiln generated
// for it. The source makes the key follow every change to kiln's passes, schedule and
// code generator, also between builds that share a version number (a stale object would
// disagree with this kiln about buffer layout and arithmetic).
cache::KeyIngredients cache_key_ingredients(const std::string& canonical_text, PrecisionPolicy policy,
                                            std::string_view generated_source, const Toolchain& tc);

// The object stored for this key, loaded, or null (then the caller compiles and the
// session's key lock is held). An entry that passes its checks but cannot be loaded, or
// whose object says it was built for another identity, is rejected as damaged (and
// replaced by the compile). Fills report.load_seconds on a hit, and `bytes` (when given)
// with the object file's bytes.
std::unique_ptr<SharedObject> load_cached(cache::Session& session, const std::string& identity, CompileReport& report,
                                          std::string* bytes = nullptr);

// The bytes of a compiled object file (SystemError naming it when it cannot be read).
std::string read_object_file(const std::string& path);

// What `kiln cache list` shows of an entry: compile seconds by stage, sizes, the graph,
// as the user wrote it, the policy, kernels and the arena.
nlohmann::json entry_metadata(const CompileReport& report, const Graph& graph, PrecisionPolicy policy,
                              size_t source_bytes);

}  // namespace kiln::cpu
