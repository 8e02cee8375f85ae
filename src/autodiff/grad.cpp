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

  std::vector<Tensor> cot(top + 1);
  cot[top] = reshape(constant(g, 1.0, loss.dtype()), loss.shape());
  for (size_t i = top + 1; i-- > 0;) {
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
      cot[in] = cot[in].valid() ? cot[in] + gx[k] : gx[k];
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
