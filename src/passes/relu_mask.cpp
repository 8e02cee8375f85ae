#include "passes/passes.h"
#include "kiln/ir/ops.h"
#include "passes/rewrite.h"

namespace kiln::passes {
namespace {

bool is_zero(const Node& n) {
  return n.op == Op::constant && !is_hyperparameter(n) && n.shape.empty() && n.attrs.f("value") == 0.0;
}

}  // namespace

Graph fuse_relu_masks(const Graph& g) {
  const std::vector<int> uses = use_counts(g);

  Rewriter rw(g);
  for (size_t i = 0; i < g.size(); ++i) {
    const auto id = static_cast<ValueId>(i);
    const Node& n = g.node(id);
    // select(greater(x, 0), max_pool2d_grad(x, dy), 0), the pool's gradient used once.
    if (n.op == Op::select && is_zero(g.node(n.inputs[2]))) {
      const Node& cond = g.node(n.inputs[0]);
      const Node& pg = g.node(n.inputs[1]);
      if (cond.op == Op::greater && is_zero(g.node(cond.inputs[1])) && pg.op == Op::max_pool2d_grad &&
          pg.inputs[0] == cond.inputs[0] && uses[n.inputs[1]] == 1 && pg.dtype == n.dtype &&
          pg.attrs.i_or("positive", 0) == 0) {
        Attrs attrs = pg.attrs;
        attrs.set("positive", int64_t{1});
        const ValueId f = rw.out().add(Op::max_pool2d_grad, {rw.mapped(pg.inputs[0]), rw.mapped(pg.inputs[1])}, attrs);
        rw.alias(id, f);
        carry_name(rw.out(), n, f);
        continue;
      }
    }
    rw.copy(id);
  }
  return rw.finish();
}

}  // namespace kiln::passes
