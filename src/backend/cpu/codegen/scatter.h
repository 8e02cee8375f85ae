// Generated scatter_add kernels (see codegen/scatter.cpp).
#pragma once
#include <string>

#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

// The C++ of a kernel `KILN_KERNEL void <name>(void** B)` computing the scatter_add step
// st (float32 or float64 rows; its inputs are buffers).
std::string scatter_kernel(const Schedule& s, const Step& st, const std::string& name);

}  // namespace kiln::cpu
