// Orders a data-parallel graph for overlap: every node that reads an all_reduce's result
// (directly or through others: the optimizer's updates, the scaled gradients) moves after
// every node that does not, each group keeping its order. The backward pass then runs to
// its end after the first bucket's sum has started, and the CPU backend, which starts a
// sum and waits for it only before the first step that reads it (codegen.cpp), overlaps
// the sums with that compute. The all_reduces keep their order (none reads another's
// result), so every rank still issues the same calls in the same order. Values do not
// change: this is a topological order like the one before.
#include <vector>

#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {

Graph defer_all_reduce_readers(const Graph& g) {
  std::vector<bool> reads(g.size(), false);  // depends on some all_reduce's result
  bool any = false;
  for (size_t i = 0; i < g.size(); ++i) {
    const Node& n = g.node(static_cast<ValueId>(i));
    for (ValueId in : n.inputs) reads[i] = reads[i] || reads[in] || g.node(in).op == Op::all_reduce;
    any = any || reads[i];
  }
  if (!any) return g;
  Rewriter rw(g);
  for (bool later : {false, true})
    for (size_t i = 0; i < g.size(); ++i)
      if (reads[i] == later) rw.copy(static_cast<ValueId>(i));
  return rw.finish();
}

}  // namespace kiln::passes
