#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {
namespace {

bool onednn_type(DType t) { return t == DType::f32 || t == DType::bf16; }

struct Match {
  ValueId product = -1, bias = -1;  // the matmul or conv2d
  bool relu = false;
};

// Is `b` a bias oneDNN can add to product `p`: a row [n] / [1, n] of a 2-D matmul, or one
// value per output channel ([o], [o,1,1], [1,o,1,1]) of a convolution?
bool fits(const Node& p, const Node& b) {
  if (!(b.dtype == DType::f32 || b.dtype == p.dtype)) return false;
  if (p.op == Op::matmul) {
    const int64_t n = p.shape[1];
    return b.shape == Shape{n} || b.shape == Shape{1, n};
  }
  const int64_t o = p.shape[1];
  return b.shape == Shape{o, 1, 1} || b.shape == Shape{1, o, 1, 1};
}

}  // namespace

Graph fuse_epilogues(const Graph& g) {
  const size_t n = g.size();
  const std::vector<int> uses = use_counts(g);
  std::vector<ValueId> user(n, -1);  // a user of each value (the only one, when uses == 1)
  for (size_t i = 0; i < n; ++i)
    for (ValueId in : g.nodes()[i].inputs) user[in] = static_cast<ValueId>(i);

  // Which node becomes a dense node: the relu of relu(matmul + bias), else the add.
  std::vector<Match> at(n);
  for (size_t i = 0; i < n; ++i) {
    const Node& m = g.nodes()[i];
    const bool product = (m.op == Op::matmul && m.shape.size() == 2) || m.op == Op::conv2d;
    if (!product || !onednn_type(m.dtype) || uses[i] != 1) continue;
    const ValueId aid = user[i];
    const Node& a = g.node(aid);
    if (a.op != Op::add || a.dtype != m.dtype || a.shape != m.shape || a.inputs[0] == a.inputs[1]) continue;
    const ValueId bias = a.inputs[0] == static_cast<ValueId>(i) ? a.inputs[1] : a.inputs[0];
    if (!fits(m, g.node(bias))) continue;
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
    if (f.product < 0) {
      rw.copy(id);
      continue;
    }
    const Node& m = g.node(f.product);
    Attrs attrs = m.attrs;
    attrs.set("relu", int64_t{f.relu});
    const Op op = m.op == Op::matmul ? Op::dense : Op::conv2d_bias;
    const ValueId d = rw.out().add(op, {rw.mapped(m.inputs[0]), rw.mapped(m.inputs[1]), rw.mapped(f.bias)}, attrs);
    rw.alias(id, d);
    carry_name(rw.out(), g.node(id), d);
  }
  return rw.finish();
}

}  // namespace kiln::passes
