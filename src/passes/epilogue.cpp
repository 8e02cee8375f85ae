#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {
namespace {

bool onednn_type(DType t, bool float16) { return t == DType::f32 || t == DType::bf16 || (float16 && t == DType::f16); }

struct Match {
  ValueId product = -1, bias = -1, addend = -1;  // the matmul or conv2d; -1: none
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

// The other input of add node `a` when `a` adds `v` to something else of `v`'s type, else -1.
ValueId other_addend(const Node& a, ValueId v, const Node& vn) {
  if (a.op != Op::add || a.dtype != vn.dtype || a.shape != vn.shape || a.inputs[0] == a.inputs[1]) return -1;
  return a.inputs[0] == v ? a.inputs[1] : a.inputs[0];
}

}  // namespace

Graph fuse_epilogues(const Graph& g, bool float16) {
  const size_t n = g.size();
  const std::vector<int> uses = use_counts(g);
  std::vector<ValueId> user(n, -1);  // a user of each value (the only one, when uses == 1)
  for (size_t i = 0; i < n; ++i)
    for (ValueId in : g.nodes()[i].inputs) user[in] = static_cast<ValueId>(i);
  // The sole user of v, or -1.
  auto sole_user = [&](ValueId v) { return uses[v] == 1 ? user[v] : -1; };

  // Is v in memory anyway: made by a kernel of its own or read by another op too? An
  // elementwise value read only by the sum (momentum * velocity) is better computed in
  // the sum's loop than stored for oneDNN to read back.
  auto stored = [&](ValueId v) { return !op_info(g.node(v).op).fusible || uses[v] > 1; };

  // Which node becomes the dense (conv2d_bias) node: the last of the chain product
  // [+ bias] [+ addend] [relu], where a matmul takes a bias, an addend or both (added in
  // that order, as oneDNN does) and a convolution a bias; each link the only user of the
  // one before.
  std::vector<Match> at(n);
  for (size_t i = 0; i < n; ++i) {
    const auto pid = static_cast<ValueId>(i);
    const Node& m = g.nodes()[i];
    const bool matmul = m.op == Op::matmul && m.shape.size() == 2;
    if (!(matmul || m.op == Op::conv2d) || !onednn_type(m.dtype, float16)) continue;
    Match f{pid};
    ValueId root = pid;
    if (const ValueId a = sole_user(root); a >= 0)
      if (const ValueId o = other_addend(g.node(a), root, m); o >= 0 && fits(m, g.node(o))) {
        f.bias = o;
        root = a;
      }
    if (const ValueId a = sole_user(root); matmul && a >= 0)
      if (const ValueId o = other_addend(g.node(a), root, m); o >= 0 && g.node(o).shape == m.shape && stored(o)) {
        f.addend = o;
        root = a;
      }
    if (root == pid) continue;  // nothing to fold
    if (const ValueId r = sole_user(root); r >= 0 && g.node(r).op == Op::relu) {
      f.relu = true;
      root = r;
    }
    if (at[root].product < 0) at[root] = f;  // an add of two products folds the first
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
    std::vector<ValueId> inputs{rw.mapped(m.inputs[0]), rw.mapped(m.inputs[1])};
    if (f.bias >= 0) inputs.push_back(rw.mapped(f.bias));
    if (m.op == Op::matmul && f.bias < 0) attrs.set("bias", int64_t{0});
    if (f.addend >= 0) {
      inputs.push_back(rw.mapped(f.addend));
      attrs.set("addend", int64_t{1});
    }
    const Op op = m.op == Op::matmul ? Op::dense : Op::conv2d_bias;
    const ValueId d = rw.out().add(op, inputs, attrs);
    rw.alias(id, d);
    carry_name(rw.out(), g.node(id), d);
  }
  return rw.finish();
}

}  // namespace kiln::passes
