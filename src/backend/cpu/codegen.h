// C++ code generation: one translation unit per schedule, with a kernel function per
// fused group and a `kiln_step` entry point that runs the steps in order.
#pragma once
#include <string>

#include "backend/cpu/schedule.h"

namespace kiln::cpu {

extern const char* const kPrelude;
extern const char* const kPreludePool;  // prelude_pool.cpp

std::string generate_source(const Schedule& s);

}  // namespace kiln::cpu
