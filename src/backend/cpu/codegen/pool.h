// Generated loop nests for pooling and its gradients (see codegen/pool.cpp).
#pragma once
#include <string>

#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

// The C++ of a kernel `KILN_KERNEL void <name>(void** B)` computing the pooling step st.
std::string pool_kernel(const Schedule& s, const Step& st, const std::string& name);

// 2x2 max pooling with stride 2 and no padding (or its gradient), float32 or bfloat16
// throughout: the CNN's pools, with vectorised kernels for plain and blocked layouts.
bool is_maxpool2x2(const Graph& g, const Node& n);

// Such a pooling step whose x is stored channel-blocked (Schedule::block_of, see
// layout_plan.h): a block's channels are the vector lanes (codegen/pool_blocked.cpp).
std::string blocked_maxpool2x2(const Schedule& s, const Step& st, const std::string& name);

}  // namespace kiln::cpu
