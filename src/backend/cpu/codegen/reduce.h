// Generated reduction kernels (see codegen/reduce.cpp).
#pragma once
#include <string>

#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

// The C++ of a kernel `KILN_KERNEL void <name>(void** B)` computing the reduction step st,
// with its input expression fused into the loop.
// A step with several roots is a loop with column sums joined to it
// (joined_column_sums_kernel, codegen/column_sums.cpp).
std::string reduce_kernel(const Schedule& s, const Step& st, const std::string& name);
std::string joined_column_sums_kernel(const Schedule& s, const Step& st, const std::string& name);

// A sum's (or mean's, over `count` elements) final value from its double accumulator
// `acc`, as stored in the node's type.
std::string finished_sum(const Node& n, const std::string& acc, int64_t count);

// After a chunked column sum's loop (column_sum_chunks): each of the `columns` sums of its
// `chunks` partials in `part` ([chunk][column], double), added in chunk order, stored as
// `out`[j].
std::string combined_chunks(const Node& n, const std::string& part, const std::string& out, int64_t columns,
                            int64_t chunks, int64_t count);

}  // namespace kiln::cpu
