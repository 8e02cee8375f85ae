#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {
namespace {

bool onednn_type(DType t) { return t == DType::f32 || t == DType::bf16; }

struct Match {
  ValueId matmul = -1, bias = -1;
  bool relu = false;
};

}  // namespace

Graph fuse_epilogues(const Graph& g) {
  const size_t n = g.size();
  std::vector<int> uses(n, 0);
  std::vector<ValueId> user(n, -1);  // a user of each value (the only one, when uses == 1)
  for (size_t i = 0; i < n; ++i)
    for (ValueId in : g.nodes()[i].inputs) {
      ++uses[in];
      user[in] = static_cast<ValueId>(i);
    }
  for (const Output& o : g.outputs()) uses[o.value] += 2;  // an output is needed as it is

  // Which node becomes a dense node: the relu of relu(matmul + bias), else the add.
  std::vector<Match> at(n);
  for (size_t i = 0; i < n; ++i) {
    const Node& m = g.nodes()[i];
    if (m.op != Op::matmul || m.shape.size() != 2 || !onednn_type(m.dtype) || uses[i] != 1) continue;
    const ValueId aid = user[i];
    const Node& a = g.node(aid);
    if (a.op != Op::add || a.dtype != m.dtype || a.shape != m.shape || a.inputs[0] == a.inputs[1]) continue;
    const ValueId bias = a.inputs[0] == static_cast<ValueId>(i) ? a.inputs[1] : a.inputs[0];
    const Node& b = g.node(bias);
    const int64_t cols = m.shape[1];
    if (!(b.shape == Shape{cols} || b.shape == Shape{1, cols}) || !(b.dtype == DType::f32 || b.dtype == m.dtype)) continue;
    ValueId root = aid;
    bool relu = false;
    if (uses[aid] == 1 && g.node(user[aid]).op == Op::relu) {
      root = user[aid];
      relu = true;
    }
    at[root] = {static_cast<ValueId>(i), bias, relu};
  }

  Rewriter rw(g);
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<ValueId>(i);
    const Match& f = at[i];
    if (f.matmul < 0) {
      rw.copy(id);
      continue;
    }
    const Node& m = g.node(f.matmul);
    Attrs attrs = m.attrs;
    attrs.set("relu", int64_t{f.relu});
    const ValueId d = rw.out().add(Op::dense, {rw.mapped(m.inputs[0]), rw.mapped(m.inputs[1]), rw.mapped(f.bias)}, attrs);
    rw.alias(id, d);
    carry_name(rw.out(), g.node(id), d);
  }
  return rw.finish();
}

}  // namespace kiln::passes
