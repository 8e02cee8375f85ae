// Generated loop nests for pooling and its gradients (see codegen_pool.cpp).
#pragma once
#include <string>

#include "backend/cpu/schedule.h"

namespace kiln::cpu {

// The C++ of a kernel `KILN_KERNEL void <name>(void** B)` computing the pooling step st.
std::string pool_kernel(const Schedule& s, const Step& st, const std::string& name);

}  // namespace kiln::cpu
