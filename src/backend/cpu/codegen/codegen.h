// C++ code generation: a kernel function per fused group and a `kiln_step` entry point
// that runs the steps in order. The code is one text (what the cache key and the dumps
// hold) that can be cut into translation units compiled side by side: units(n) gives n
// files with the same functions, kernels spread by size, so the object does the same
// whatever n is and the key does not depend on the machine's core count.
#pragma once
#include <string>
#include <vector>

#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

// Types, kFloatMathText, then km:: and the conversions (prelude.cpp).
extern const std::string kPrelude;
extern const char* const kPreludePool;  // prelude_pool.cpp
extern const char* const kPhiloxText;   // src/ir/philox.h, embedded by the build
extern const char* const kFloatMathText;  // kiln/ir/float_math.h, embedded by the build

struct GeneratedSource {
  // One function each, `KILN_KERNEL void kN(void** B, const int* I)`: step N's kernel,
  // its buffers B[I[0]], B[I[1]], ...; later steps with the same code call it too.
  std::vector<std::string> kernels;
  std::string entry;                 // kernel declarations, kiln_abi_version, kiln_step
  bool pool = false;                 // pooling kernels: the prelude needs kPreludePool
  bool random = false;               // random ops: the prelude needs kPhiloxText

  // The whole step as one translation unit: KILN_KERNEL is `static`.
  std::string text() const;
  // The step in min(n, kernels + 1) translation units (at least one), each starting
  // with the prelude; the first holds the entry point and `entry_extra` (the object's
  // identity). With more than one, KILN_KERNEL is a hidden external function.
  std::vector<std::string> units(int n, const std::string& entry_extra) const;
};

GeneratedSource generate_source(const Schedule& s);

}  // namespace kiln::cpu
