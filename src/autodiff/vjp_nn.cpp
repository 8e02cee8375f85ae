// VJPs of matmul, convolution, pooling and the embedding lookup.
#include "autodiff/vjp.h"

namespace kiln::autodiff {

// The four transpose cases, as in TensorFlow's MatMul gradient.
void vjp_matmul(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  const Tensor a = input(y, n, 0), b = input(y, n, 1);
  const bool ta = n.attrs.i("transpose_a") != 0, tb = n.attrs.i("transpose_b") != 0;
  if (!ta && !tb) {
    gx[0] = matmul(gy, b, false, true);
    gx[1] = matmul(a, gy, true, false);
  } else if (!ta && tb) {
    gx[0] = matmul(gy, b, false, false);
    gx[1] = matmul(gy, a, true, false);
  } else if (ta && !tb) {
    gx[0] = matmul(b, gy, false, true);
    gx[1] = matmul(a, gy, false, false);
  } else {
    gx[0] = matmul(b, gy, true, true);
    gx[1] = matmul(gy, a, true, true);
  }
}

void vjp_conv2d(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  const Tensor x = input(y, n, 0), w = input(y, n, 1);
  Graph& g = y.graph();
  Attrs common{{"stride", n.attrs.ints("stride")}, {"padding", n.attrs.ints("padding")}};
  if (n.attrs.has("groups")) common.set("groups", n.attrs.i("groups"));
  Attrs in_attrs = common, w_attrs = common;
  in_attrs.set("input_shape", x.shape());
  w_attrs.set("filter_shape", w.shape());
  gx[0] = Tensor(&g, g.add(Op::conv2d_backward_input, {gy.id(), w.id()}, in_attrs));
  gx[1] = Tensor(&g, g.add(Op::conv2d_backward_filter, {x.id(), gy.id()}, w_attrs));
}

void vjp_max_pool2d(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  Graph& g = y.graph();
  gx[0] = Tensor(&g, g.add(Op::max_pool2d_grad, {n.inputs[0], gy.id()}, n.attrs));
}

void vjp_avg_pool2d(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  Graph& g = y.graph();
  Attrs a = n.attrs;
  a.set("input_shape", input(y, n, 0).shape());
  gx[0] = Tensor(&g, g.add(Op::avg_pool2d_grad, {gy.id()}, a));
}

// The embedding lookup's gradient sums each row's cotangents into its row: a scatter,
// not a one_hot x matmul over the whole vocabulary. The indices get none.
void vjp_gather(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  gx[0] = scatter_add(gy, input(y, n, 1), input(y, n, 0).dim(0));
}

void vjp_scatter_add(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  gx[0] = gather(gy, input(y, n, 1));
}

// Ops without a gradient: sources, comparisons, integer-valued results, state, and the
// backward ops themselves (kiln does not take second derivatives).
#define KILN_NO_GRADIENT(name) \
  void vjp_##name(const Node&, const Tensor&, const Tensor&, Grads&) {}
KILN_NO_GRADIENT(placeholder)
KILN_NO_GRADIENT(dense)
KILN_NO_GRADIENT(conv2d_bias)
KILN_NO_GRADIENT(variable)
KILN_NO_GRADIENT(constant)
KILN_NO_GRADIENT(equal)
KILN_NO_GRADIENT(not_equal)
KILN_NO_GRADIENT(less)
KILN_NO_GRADIENT(less_equal)
KILN_NO_GRADIENT(greater)
KILN_NO_GRADIENT(greater_equal)
KILN_NO_GRADIENT(conv2d_backward_input)
KILN_NO_GRADIENT(conv2d_backward_filter)
KILN_NO_GRADIENT(max_pool2d_grad)
KILN_NO_GRADIENT(all_reduce)
KILN_NO_GRADIENT(avg_pool2d_grad)
KILN_NO_GRADIENT(one_hot)
KILN_NO_GRADIENT(random)
KILN_NO_GRADIENT(argmax)
KILN_NO_GRADIENT(assign)
#undef KILN_NO_GRADIENT

}  // namespace kiln::autodiff
