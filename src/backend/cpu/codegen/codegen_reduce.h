// Generated reduction kernels (see codegen_reduce.cpp).
#pragma once
#include <string>

#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

// The C++ of a kernel `KILN_KERNEL void <name>(void** B)` computing the reduction step st,
// with its input expression fused into the loop.
// A step with several roots is a loop with column sums joined to it
// (joined_column_sums_kernel, codegen_column_sums.cpp).
std::string reduce_kernel(const Schedule& s, const Step& st, const std::string& name);
std::string joined_column_sums_kernel(const Schedule& s, const Step& st, const std::string& name);

}  // namespace kiln::cpu
