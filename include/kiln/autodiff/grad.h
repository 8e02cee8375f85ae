// Reverse-mode automatic differentiation on the graph.
#pragma once
#include <vector>

#include "kiln/ir/ops.h"

namespace kiln {

// Appends to loss's graph the nodes that compute d(loss)/d(x) for each x in `wrt`, and
// returns them in order. `loss` must be a float scalar. A value the loss does not depend
// on (or depends on only through non-differentiable ops) gets a zero gradient. Each op's
// rule is its VJP in src/autodiff/; gradients are reduced back over broadcast axes.
std::vector<Tensor> grad(const Tensor& loss, const std::vector<Tensor>& wrt);

}  // namespace kiln
