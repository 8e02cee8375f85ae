// One vector-Jacobian product rule per op, found by name: vjp_<op>. Given the node, its
// output y and the cotangent gy, a rule sets gx[i] to the cotangent of input i, or leaves
// it invalid when input i gets no gradient. Non-differentiable ops use no_gradient.
#pragma once
#include <vector>

#include "kiln/ir/ops.h"

namespace kiln::autodiff {

using Grads = std::vector<Tensor>;

#define KILN_X(name, ...) void vjp_##name(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx);
KILN_OPS(KILN_X)
#undef KILN_X

// Input i of node n as a Tensor.
inline Tensor input(const Tensor& y, const Node& n, size_t i) { return Tensor(&y.graph(), n.inputs[i]); }

}  // namespace kiln::autodiff
