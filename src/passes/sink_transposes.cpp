#include <algorithm>
#include <optional>
#include <vector>

#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {
namespace {

using Perm = std::vector<int64_t>;

// A value of the input graph held as transpose(source, perm) without computing the
// transpose: `source` is a node of the output graph.
struct Lazy {
  ValueId source = -1;
  Perm perm;
};

bool elementwise(const Node& n) {
  switch (op_info(n.op).family) {
    case OpFamily::Cast: case OpFamily::Unary: case OpFamily::Binary: case OpFamily::Compare:
    case OpFamily::Select: return true;
    default: return false;
  }
}

bool identity(const Perm& p) {
  for (size_t k = 0; k < p.size(); ++k)
    if (p[k] != static_cast<int64_t>(k)) return false;
  return true;
}

// transpose(transpose(s, p), q) == transpose(s, r)
Perm compose(const Perm& p, const Perm& q) {
  Perm r(q.size());
  for (size_t j = 0; j < q.size(); ++j) r[j] = p[static_cast<size_t>(q[j])];
  return r;
}

int64_t elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Does transpose(s, p) only move axes of extent 1, so that it is a reshape?
bool moves_only_ones(const Shape& s, const Perm& p) {
  int64_t last = -1;
  for (int64_t axis : p) {
    if (s[static_cast<size_t>(axis)] == 1) continue;
    if (axis < last) return false;
    last = axis;
  }
  return true;
}

// Elements moved by transposes that are not reshapes: what the pass must not increase.
int64_t transposed_elements(const Graph& g) {
  int64_t total = 0;
  for (const Node& n : g.nodes())
    if (n.op == Op::transpose && !moves_only_ones(g.node(n.inputs[0]).shape, n.attrs.ints("perm")))
      total += elements(n.shape);
  return total;
}

class Sinker {
 public:
  explicit Sinker(const Graph& g) : g_(g), rw_(g), lazy_(g.size()), output_(g.size(), false) {
    for (const Output& o : g.outputs()) output_[o.value] = true;
  }

  Graph run() {
    for (size_t i = 0; i < g_.size(); ++i) {
      const auto id = static_cast<ValueId>(i);
      const Node& n = g_.node(id);
      if (n.op == Op::transpose) sink_transpose(id, n);
      else if (!(elementwise(n) && sink_elementwise(id, n)) && !(reduction(n) && sink_reduction(id, n))) copy(id, n);
      if (lazy_[i] && output_[i]) value(id);  // outputs are read in the layout they were written in
    }
    return rw_.finish();
  }

 private:
  // The value of input node `id` in the output graph, computing a held transpose once.
  ValueId value(ValueId id) {
    if (!lazy_[id]) return rw_.mapped(id);
    if (rw_.done(id)) return rw_.mapped(id);
    const Lazy& l = *lazy_[id];
    const Node& s = rw_.out().node(l.source);
    const ValueId v = moves_only_ones(s.shape, l.perm)
                          ? rw_.out().add(Op::reshape, {l.source}, {{"shape", g_.node(id).shape}})
                          : rw_.out().add(Op::transpose, {l.source}, {{"perm", l.perm}});
    rw_.alias(id, v);
    carry_name(rw_.out(), g_.node(id), v);
    return v;
  }

  void copy(ValueId id, const Node& n) {
    Node c = n;
    for (ValueId& x : c.inputs) x = value(x);
    rw_.alias(id, rw_.out().add_unchecked(std::move(c)));
  }

  void sink_transpose(ValueId id, const Node& n) {
    const ValueId x = n.inputs[0];
    Lazy l{-1, n.attrs.ints("perm")};
    if (lazy_[x]) l = {lazy_[x]->source, compose(lazy_[x]->perm, l.perm)};
    else l.source = rw_.mapped(x);
    if (identity(l.perm)) {
      rw_.alias(id, l.source);
      carry_name(rw_.out(), n, l.source);
      return;
    }
    lazy_[id] = l;
  }

  // An elementwise node whose full-size inputs are all held transposes of one perm is
  // computed on their sources, and held as a transpose of the result. Its other inputs
  // must broadcast along at most one axis (a bias, a scalar, a broadcast_to of one, as
  // autodiff writes a reduction's gradient): they are reshaped to broadcast the same way
  // in the source layout.
  bool sink_elementwise(ValueId id, const Node& n) {
    const Perm* perm = nullptr;
    for (ValueId x : n.inputs)
      if (lazy_[x] && g_.node(x).shape == n.shape) {
        perm = &lazy_[x]->perm;
        break;
      }
    if (!perm) return false;
    const Perm p = *perm;
    auto held = [&](ValueId x) { return lazy_[x] && lazy_[x]->perm == p && g_.node(x).shape == n.shape; };
    // What a broadcast input broadcasts from: a broadcast_to's input (the op broadcasts
    // it the same way), else the input itself.
    auto base = [&](ValueId x) { return g_.node(x).op == Op::broadcast_to ? g_.node(x).inputs[0] : x; };
    for (ValueId x : n.inputs)
      if (!held(x) && !source_broadcast(g_.node(base(x)).shape, n.shape.size(), p)) return false;
    std::vector<ValueId> inputs;
    for (ValueId x : n.inputs) {
      if (held(x)) {
        inputs.push_back(lazy_[x]->source);
        continue;
      }
      const ValueId b = base(x), v = value(b);
      const Shape shape = *source_broadcast(g_.node(b).shape, n.shape.size(), p);
      inputs.push_back(shape == g_.node(b).shape ? v : rw_.out().add(Op::reshape, {v}, {{"shape", shape}}));
    }
    lazy_[id] = Lazy{rw_.out().add(n.op, inputs, n.attrs), p};
    return true;
  }

  // The shape that broadcasts in the source layout as `s` does against a value of `rank`
  // held as transpose(source, p): none when more than one axis is not 1.
  static std::optional<Shape> source_broadcast(const Shape& s, size_t rank, const Perm& p) {
    if (s.size() > rank) return std::nullopt;
    const size_t lead = rank - s.size();
    std::optional<size_t> axis;
    for (size_t k = 0; k < s.size(); ++k) {
      if (s[k] == 1) continue;
      if (axis) return std::nullopt;
      axis = k + lead;
    }
    if (!axis) return s;  // a scalar or all ones: broadcasts the same in any layout
    Shape out(rank, 1);
    out[static_cast<size_t>(p[*axis])] = s[*axis - lead];
    return out;
  }

  static bool reduction(const Node& n) { return op_info(n.op).family == OpFamily::Reduce; }

  // A reduction of a held transpose reduces the source over the matching axes.
  bool sink_reduction(ValueId id, const Node& n) {
    const ValueId x = n.inputs[0];
    if (!lazy_[x]) return false;
    const Perm& p = lazy_[x]->perm;
    std::vector<bool> reduced(p.size(), false);
    Perm axes;
    for (int64_t a : n.attrs.ints("axes")) {
      reduced[static_cast<size_t>(a)] = true;
      axes.push_back(p[static_cast<size_t>(a)]);
    }
    std::sort(axes.begin(), axes.end());
    Attrs attrs = n.attrs;
    attrs.set("axes", axes);
    const ValueId r = rw_.out().add(n.op, {lazy_[x]->source}, attrs);
    Perm q;  // the result's axes as a transpose of r's
    if (n.attrs.i("keepdims") != 0) {
      q = p;
    } else {
      std::vector<bool> gone(p.size(), false);
      for (int64_t a : axes) gone[static_cast<size_t>(a)] = true;
      for (size_t k = 0; k < p.size(); ++k) {
        if (reduced[k]) continue;
        const int64_t src = p[k];
        q.push_back(src - std::count(gone.begin(), gone.begin() + src, true));
      }
    }
    if (identity(q)) {
      rw_.alias(id, r);
      carry_name(rw_.out(), n, r);
    } else {
      lazy_[id] = Lazy{r, q};
    }
    return true;
  }

  const Graph& g_;
  Rewriter rw_;
  std::vector<std::optional<Lazy>> lazy_;
  std::vector<bool> output_;
};

}  // namespace

Graph sink_transposes(const Graph& g) {
  Graph out = Sinker(g).run();
  // Never more data moved than before: a held transpose needed by several consumers that
  // cannot take it lazily is computed once, but an elementwise chain sunk below its
  // transpose could still need several; then the graph is kept as it was.
  return transposed_elements(dce(out)) <= transposed_elements(dce(g)) ? out : g;
}

}  // namespace kiln::passes
