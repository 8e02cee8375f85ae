#include "backend/interpreter_cost.h"

#include "ir/conv_geometry.h"

namespace kiln {
namespace {

// Rates below what the interpreter reaches on one core of a 2020s x86 (measured on the
// character RNN's evaluation graph and the convolution kernels): an estimate that errs
// towards compiling.
constexpr double kPerNode = 5e-6;        // s: dispatch, allocation of the result
constexpr double kPerElement = 2e-8;     // s: one element of an elementwise, gather or reduction op
constexpr double kMatmulFlops = 5e9;     // /s: oneDNN's matmul, small shapes
constexpr double kWindowFlops = 5e8;     // /s: textbook convolution and pooling loops

double node_seconds(const Graph& g, const Node& n) {
  const double out = static_cast<double>(numel(n.shape));
  switch (op_info(n.op).family) {
    case OpFamily::Source: return 0;
    case OpFamily::MatMul:
    case OpFamily::Dense: {
      // a [.., m, k] (or [.., k, m]) times [k, n]: numel(a) * n multiply-adds.
      const Shape& a = g.node(n.inputs[0]).shape;
      const double cols = n.shape.empty() ? 1.0 : static_cast<double>(n.shape.back());
      return 2.0 * static_cast<double>(numel(a)) * cols / kMatmulFlops;
    }
    case OpFamily::Conv2D:
    case OpFamily::Conv2DBias:
    case OpFamily::Conv2DBackwardInput:
    case OpFamily::Conv2DBackwardFilter:
    case OpFamily::Pool2D:
    case OpFamily::Pool2DGrad:
    case OpFamily::AvgPool2DGrad: {
      // A convolution reads c / groups input channels per window; a pool, one (o = c).
      const ConvGeometry c = conv_geometry(g, n);
      const OpFamily f = op_info(n.op).family;
      const bool pool = f == OpFamily::Pool2D || f == OpFamily::Pool2DGrad || f == OpFamily::AvgPool2DGrad;
      const double window = static_cast<double>(c.n * c.o * c.oh * c.ow * c.kh * c.kw);
      return 2.0 * window * (pool ? 1.0 : static_cast<double>(c.c / c.groups)) / kWindowFlops;
    }
    default: {
      double in = 0;
      for (ValueId v : n.inputs) in += static_cast<double>(numel(g.node(v).shape));
      return (out > in ? out : in) * kPerElement;
    }
  }
}

}  // namespace

double interpreter_seconds(const Graph& g) {
  double s = 0;
  for (const Node& n : g.nodes()) s += kPerNode + node_seconds(g, n);
  return s;
}

}  // namespace kiln
