// VJPs of reductions and layout ops.
#include "autodiff/vjp.h"

namespace kiln::autodiff {
namespace {
// gy of a reduction, reshaped as if keepdims were set, then broadcast to the input.
Tensor spread(const Node& n, const Tensor& x, const Tensor& gy) {
  Shape kept = x.shape();
  for (int64_t a : n.attrs.ints("axes")) kept[a] = 1;
  return broadcast_to(reshape(gy, kept), x.shape());
}
}  // namespace

void vjp_reduce_sum(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  gx[0] = spread(n, input(y, n, 0), gy);
}
void vjp_reduce_mean(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  const Tensor x = input(y, n, 0);
  int64_t count = 1;
  for (int64_t a : n.attrs.ints("axes")) count *= x.shape()[a];
  gx[0] = spread(n, x, gy / static_cast<double>(count));
}
// The gradient is shared equally by all positions that hold the maximum.
void vjp_reduce_max(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  const Tensor x = input(y, n, 0);
  const Tensor mask = equal(x, spread(n, x, y));
  const Tensor hits = cast(mask, x.dtype());
  const Tensor count = reduce_sum(hits, n.attrs.ints("axes"), n.attrs.i("keepdims") != 0);
  gx[0] = hits * spread(n, x, gy / count);
}
void vjp_reshape(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  gx[0] = reshape(gy, input(y, n, 0).shape());
}
void vjp_transpose(const Node& n, const Tensor&, const Tensor& gy, Grads& gx) {
  const auto& perm = n.attrs.ints("perm");
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  gx[0] = transpose(gy, inverse);
}
void vjp_broadcast_to(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  gx[0] = sum_to(gy, input(y, n, 0).shape());
}
void vjp_slice(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  const Shape& in = input(y, n, 0).shape();
  const auto& b = n.attrs.ints("begin");
  const auto& e = n.attrs.ints("end");
  std::vector<int64_t> high(in.size());
  for (size_t i = 0; i < in.size(); ++i) high[i] = in[i] - e[i];
  gx[0] = pad(gy, b, high);
}
void vjp_pad(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  const Shape& in = input(y, n, 0).shape();
  const auto& lo = n.attrs.ints("low");
  std::vector<int64_t> end(in.size());
  for (size_t i = 0; i < in.size(); ++i) end[i] = lo[i] + in[i];
  gx[0] = slice(gy, lo, end);
}
void vjp_concat(const Node& n, const Tensor& y, const Tensor& gy, Grads& gx) {
  const int64_t axis = n.attrs.i("axis");
  std::vector<int64_t> begin(y.rank(), 0);
  std::vector<int64_t> end = y.shape();
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    end[axis] = begin[axis] + input(y, n, k).shape()[axis];
    gx[k] = slice(gy, begin, end);
    begin[axis] = end[axis];
  }
}

}  // namespace kiln::autodiff
