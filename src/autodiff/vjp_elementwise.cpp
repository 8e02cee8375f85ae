// VJPs of elementwise ops. Binary ops broadcast, so each cotangent is summed back to
// its input's shape.
#include "autodiff/vjp.h"

namespace kiln::autodiff {
namespace {
Tensor zeros_like(const Tensor& t) { return scalar_like(t, 0.0); }
}  // namespace

void vjp_cast(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  const Tensor x = input(y, n, 0);
  if (is_float(x.dtype())) gx[0] = cast(gy, x.dtype());
}
void vjp_stop_gradient(const Node&, const Tensor&, const Tensor&, Grads&) {}
void vjp_neg(const Node&, const Tensor&, const Tensor& gy, Grads& gx) { gx[0] = -gy; }
void vjp_abs(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) { gx[0] = gy * sign(input(y, n, 0)); }
void vjp_sign(const Node&, const Tensor&, const Tensor&, Grads&) {}  // zero almost everywhere
void vjp_exp(const Node&, const Tensor& y, const Tensor& gy, Grads& gx) { gx[0] = gy * y; }
void vjp_log(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) { gx[0] = gy / input(y, n, 0); }
void vjp_sqrt(const Node&, const Tensor& y, const Tensor& gy, Grads& gx) { gx[0] = gy / (y * 2.0); }
void vjp_rsqrt(const Node&, const Tensor& y, const Tensor& gy, Grads& gx) { gx[0] = gy * (y * y * y) * -0.5; }
void vjp_tanh(const Node&, const Tensor& y, const Tensor& gy, Grads& gx) { gx[0] = gy * (1.0 - y * y); }
void vjp_sigmoid(const Node&, const Tensor& y, const Tensor& gy, Grads& gx) { gx[0] = gy * (y * (1.0 - y)); }
// y > 0 exactly where x > 0 (a NaN x gives a NaN y: 0 either way). Testing the output
// rather than the input means the backward pass keeps only the activation, so a fused
// bias+ReLU loop writes one tensor instead of two.
void vjp_relu(const Node&, const Tensor& y, const Tensor& gy, Grads& gx) {
  gx[0] = select(greater(y, zeros_like(y)), gy, zeros_like(gy));
}
// d/dx x*Phi(x) = Phi(x) + x*phi(x)
// One op (gelu_grad), so a bfloat16 step computes the gradient in float32 and rounds once.
void vjp_gelu(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) { gx[0] = gelu_grad(input(y, n, 0), gy); }
// g = gy * (Phi(x) + x*phi(x)): dg/dgy = gelu'(x) (gelu_grad again), dg/dx = gy * phi(x) * (2 - x^2).
void vjp_gelu_grad(const Node& n, const Tensor& y, const Tensor& gg, Grads& gx) {
  const Tensor x = input(y, n, 0), gy = input(y, n, 1);
  const Tensor pdf = exp(x * x * -0.5) * 0.3989422804014327;
  gx[0] = sum_to(gg * gy * pdf * (2.0 - x * x), x.shape());
  gx[1] = sum_to(gelu_grad(x, gg), gy.shape());
}
void vjp_erf(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  const Tensor x = input(y, n, 0);
  gx[0] = gy * (exp(-(x * x)) * 1.1283791670955126);
}
// d/dx cos x = -sin x = cos(x + pi/2)
void vjp_cos(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  gx[0] = gy * cos(input(y, n, 0) + 1.5707963267948966);
}

void vjp_add(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  gx[0] = sum_to(gy, input(y, n, 0).shape());
  gx[1] = sum_to(gy, input(y, n, 1).shape());
}
void vjp_sub(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  gx[0] = sum_to(gy, input(y, n, 0).shape());
  gx[1] = sum_to(-gy, input(y, n, 1).shape());
}
void vjp_mul(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  const Tensor a = input(y, n, 0), b = input(y, n, 1);
  gx[0] = sum_to(gy * b, a.shape());
  gx[1] = sum_to(gy * a, b.shape());
}
void vjp_div(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  const Tensor a = input(y, n, 0), b = input(y, n, 1);
  gx[0] = sum_to(gy / b, a.shape());
  gx[1] = sum_to(-(gy * y) / b, b.shape());
}
// Ties send the gradient to the first input, as TensorFlow does.
void vjp_maximum(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  const Tensor a = input(y, n, 0), b = input(y, n, 1);
  const Tensor first = greater_equal(a, b);
  gx[0] = sum_to(select(first, gy, zeros_like(gy)), a.shape());
  gx[1] = sum_to(select(first, zeros_like(gy), gy), b.shape());
}
void vjp_minimum(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  const Tensor a = input(y, n, 0), b = input(y, n, 1);
  const Tensor first = less_equal(a, b);
  gx[0] = sum_to(select(first, gy, zeros_like(gy)), a.shape());
  gx[1] = sum_to(select(first, zeros_like(gy), gy), b.shape());
}
// d(a^b)/da = b*a^(b-1); d(a^b)/db = a^b*log(a), taken as 0 where a <= 0.
void vjp_pow(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  const Tensor a = input(y, n, 0), b = input(y, n, 1);
  gx[0] = sum_to(gy * b * pow(a, b - 1.0), a.shape());
  const Tensor positive = greater(a, zeros_like(a));
  const Tensor safe_a = select(positive, a, scalar_like(a, 1.0));
  gx[1] = sum_to(select(positive, gy * y * log(safe_a), zeros_like(gy)), b.shape());
}
void vjp_select(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  const Tensor c = input(y, n, 0);
  gx[1] = sum_to(select(c, gy, zeros_like(gy)), input(y, n, 1).shape());
  gx[2] = sum_to(select(c, zeros_like(gy), gy), input(y, n, 2).shape());
}

}  // namespace kiln::autodiff
