#include <algorithm>
#include <array>

#include "autodiff/vjp.h"
#include "kiln/autodiff/grad.h"
#include "kiln/base/error.h"

namespace kiln {
namespace {

using Rule = void (*)(const Node&, const Tensor&, const Tensor&, autodiff::Grads&);
constexpr std::array<Rule, kNumOps> kRules = {
#define KILN_X(name, ...) &autodiff::vjp_##name,
    KILN_OPS(KILN_X)
#undef KILN_X
};

// One region of a padded contribution: where its values sit in the full-size cotangent.
struct Region {
  std::vector<int64_t> low, high;
  Tensor first;             // the first pad of this region (kept when it is the only one)
  std::vector<Tensor> parts;  // the unpadded values
};

// The axis along which every region spans one slab of `shape` (full in the other axes),
// the slabs tiling [0, extent) without gap or overlap; -1 if there is none. Sorts regions
// along it.
int64_t tiling_axis(std::vector<Region>& regions, const Shape& shape) {
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    bool slabs = true;
    for (const Region& r : regions)
      for (size_t d = 0; d < shape.size() && slabs; ++d)
        if (d != axis && (r.low[d] != 0 || r.high[d] != 0)) slabs = false;
    if (!slabs) continue;
    std::sort(regions.begin(), regions.end(), [&](const Region& a, const Region& b) { return a.low[axis] < b.low[axis]; });
    int64_t at = 0;
    for (const Region& r : regions) {
      if (r.low[axis] != at) return -1;
      at = shape[axis] - r.high[axis];
    }
    return at == shape[axis] ? static_cast<int64_t>(axis) : -1;
  }
  return -1;
}

Tensor sum(const std::vector<Tensor>& xs) {
  Tensor out = xs.front();
  for (size_t i = 1; i < xs.size(); ++i) out = out + xs[i];
  return out;
}

// A value's cotangent: the sum of its contributions. The gradient of a slice is its
// cotangent padded with zeros to the full shape, so a value read in slices (a split, a
// kernel multiplied in row blocks, an unrolled RNN's time steps) gets many full-size
// padded terms: adding them costs a pass over the full shape per term. Instead, pads of
// one region are summed inside it and padded once, and regions that tile the value along
// one axis are concatenated: the same sum, without the zeros.
Tensor sum_contributions(Graph& g, const std::vector<Tensor>& parts, const Shape& shape) {
  if (parts.size() == 1) return parts.front();
  std::vector<Tensor> others;
  std::vector<Region> regions;
  for (const Tensor& p : parts) {
    const Node& n = g.node(p.id());
    if (n.op != Op::pad) {
      others.push_back(p);
      continue;
    }
    const std::vector<int64_t>& low = n.attrs.ints("low");
    const std::vector<int64_t>& high = n.attrs.ints("high");
    auto r = std::find_if(regions.begin(), regions.end(), [&](const Region& x) { return x.low == low && x.high == high; });
    if (r == regions.end()) regions.push_back(Region{low, high, p, {}}), r = regions.end() - 1;
    r->parts.emplace_back(&g, n.inputs[0]);
  }
  std::vector<Tensor> terms = others;
  if (regions.size() > 1) {
    if (const int64_t axis = tiling_axis(regions, shape); axis >= 0) {
      std::vector<Tensor> slabs;
      for (const Region& r : regions) slabs.push_back(sum(r.parts));
      terms.push_back(concat(slabs, axis));
      return sum(terms);
    }
  }
  for (const Region& r : regions) terms.push_back(r.parts.size() == 1 ? r.first : pad(sum(r.parts), r.low, r.high));
  return sum(terms);
}

}  // namespace

std::vector<Tensor> grad(const Tensor& loss, const std::vector<Tensor>& wrt) {
  Graph& g = loss.graph();
  if (!is_float(loss.dtype()) || numel(loss.shape()) != 1)
    KILN_THROW(GraphError) << "[grad] the loss must be a float scalar, got " << dtype_name(loss.dtype())
                           << shape_str(loss.shape()) << " from " << describe_node(g, loss.id());
  const auto top = static_cast<size_t>(loss.id());
  // Which values depend on some x in wrt: only their cotangents are worth computing.
  std::vector<bool> depends(top + 1, false);
  for (const Tensor& x : wrt) {
    if (&x.graph() != &g) KILN_THROW(GraphError) << "[grad] a value in wrt belongs to another graph";
    if (static_cast<size_t>(x.id()) <= top) depends[x.id()] = true;
  }
  for (size_t i = 0; i <= top; ++i)
    for (ValueId in : g.node(static_cast<ValueId>(i)).inputs)
      if (depends[in]) depends[i] = true;

  std::vector<std::vector<Tensor>> parts(top + 1);  // each value's cotangent contributions
  std::vector<Tensor> cot(top + 1);
  cot[top] = reshape(constant(g, 1.0, loss.dtype()), loss.shape());
  for (size_t i = top + 1; i-- > 0;) {
    if (!parts[i].empty()) cot[i] = sum_contributions(g, parts[i], g.node(static_cast<ValueId>(i)).shape);
    if (!cot[i].valid() || !depends[i]) continue;
    const Node n = g.node(static_cast<ValueId>(i));  // a copy: rules append to the graph
    const OpInfo& info = op_info(n.op);
    if (!info.differentiable || n.op == Op::variable || n.op == Op::placeholder) continue;
    autodiff::Grads gx(n.inputs.size());
    kRules[static_cast<size_t>(n.op)](n, Tensor(&g, static_cast<ValueId>(i)), cot[i], gx);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const ValueId in = n.inputs[k];
      if (!gx[k].valid() || !depends[in] || !is_float(g.node(in).dtype)) continue;
      KILN_CHECK(gx[k].shape() == g.node(in).shape && gx[k].dtype() == g.node(in).dtype)
          << "VJP of " << op_name(n.op) << " gave " << dtype_name(gx[k].dtype()) << shape_str(gx[k].shape())
          << " for input " << k << " of " << dtype_name(g.node(in).dtype) << shape_str(g.node(in).shape);
      parts[in].push_back(gx[k]);
    }
  }
  std::vector<Tensor> out;
  for (const Tensor& x : wrt) {
    if (static_cast<size_t>(x.id()) <= top && cot[x.id()].valid())
      out.push_back(cot[x.id()]);
    else
      out.push_back(constant(g, 0.0, x.dtype(), x.shape()));
  }
  return out;
}

}  // namespace kiln
