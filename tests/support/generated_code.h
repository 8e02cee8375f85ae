// Test support for the CPU backend's generated C++: the source of a graph as compile_cpu
// would generate it (lowered with the default options), and counts of text in it.
#pragma once
#include <string>

#include "backend/cpu/codegen/codegen.h"
#include "backend/cpu/schedule/schedule.h"
#include "passes/passes.h"

namespace kiln::testkit {

inline cpu::GeneratedSource generated(const Graph& g) {
  return cpu::generate_source(cpu::make_schedule(passes::lower(g, {})));
}
inline std::string source_of(const Graph& g) { return generated(g).text(); }

// How many times `what` occurs in `text` (overlapping occurrences count).
inline int occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace kiln::testkit
