// What a compiled object was built for, carried inside it: the cache key, the graph's
// fingerprint, the arena size and the I/O signature (every buffer's kind, node, type and
// shape). compile_cpu() appends them to the generated source as `kiln_identity()`; every
// load compares them with what the compile asked for, so a valid shared object built for
// another graph (a swapped cache entry whose metadata was fixed up) is refused, never run.
#pragma once
#include <cstdint>
#include <string>

#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

struct ObjectIdentity {
  std::string key;        // the compile-cache key (32 hex digits)
  std::string graph;      // XXH3-128 of the canonical graph text
  int64_t arena_bytes = 0;
  std::string signature;  // XXH3-128 of the buffer table: kind, node, dtype, shape, bytes

  // One line, "key=… graph=… arena=… signature=…", as kiln_identity() returns it.
  std::string to_string() const;
};

// `graph_hash` is the canonical graph's XXH3-128, as the cache key's "graph" ingredient
// already holds it (hashing megabytes of text once is enough).
ObjectIdentity identity_of(const std::string& key, const std::string& graph_hash, const Schedule& schedule);

// C++ to append to a generated translation unit: extern "C" const char* kiln_identity().
std::string identity_source(const ObjectIdentity& identity);

}  // namespace kiln::cpu
