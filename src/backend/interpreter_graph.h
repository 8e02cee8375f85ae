// The graph the reference interpreter runs for make_executable (backend.cpp).
#pragma once
#include "kiln/backend/compiler.h"
#include "kiln/ir/graph.h"

namespace kiln {

// Under the original policy, g with its all_reduce nodes bucketed; under a mixed policy,
// g through every pass (the policy's casts). In a data-parallel job (g has all_reduce
// nodes) it is instead what the compiler lowers, whatever the policy: g's canonical form
// through every pass. Buckets are formed in node order, and a rank on the interpreter
// (its compile failed, or a hook's graph fell back) must issue the same MPI calls, in the
// same order, as its compiled peers: buckets of the written order would be summed against
// buckets of the canonical order.
Graph interpreter_graph(const Graph& g, const CompileOptions& options);

}  // namespace kiln
