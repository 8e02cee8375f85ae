#include "ir/conv_geometry.h"

#include "kiln/base/error.h"

namespace kiln {
namespace {

ConvGeometry of(const Node& n, const Shape& x, const Shape& y, int64_t kh, int64_t kw) {
  const auto& st = n.attrs.ints("stride");
  const auto& pd = n.attrs.ints("padding");
  return {x[0], x[1], x[2], x[3], y[1], kh, kw, y[2], y[3], st[0], st[1], pd[0], pd[1], n.attrs.i_or("groups", 1)};
}

}  // namespace

int64_t window_positions(int64_t in, int64_t window, int64_t stride, int64_t pad) {
  return (in + 2 * pad - window) / stride + 1;
}

ConvGeometry window_geometry(const Node& n, const Shape& x, int64_t o, int64_t kh, int64_t kw) {
  ConvGeometry g = of(n, x, {x[0], o, 0, 0}, kh, kw);
  g.oh = window_positions(g.h, kh, g.sh, g.ph);
  g.ow = window_positions(g.w, kw, g.sw, g.pw);
  return g;
}

ConvGeometry conv_geometry(const Node& n, const std::vector<Shape>& in) {
  switch (op_info(n.op).family) {
    case OpFamily::Conv2D:
    case OpFamily::Conv2DBias: return of(n, in[0], n.shape, in[1][2], in[1][3]);  // x, w -> y
    case OpFamily::Conv2DBackwardInput: return of(n, n.shape, in[0], in[1][2], in[1][3]);  // dy, w -> dx
    case OpFamily::Conv2DBackwardFilter: return of(n, in[0], in[1], n.shape[2], n.shape[3]);  // x, dy -> dw
    default: break;
  }
  const auto& k = n.attrs.ints("window");
  switch (op_info(n.op).family) {
    case OpFamily::Pool2D: return of(n, in[0], n.shape, k[0], k[1]);         // x -> y
    case OpFamily::Pool2DGrad: return of(n, in[0], in[1], k[0], k[1]);       // x, dy -> dx
    case OpFamily::AvgPool2DGrad: return of(n, n.shape, in[0], k[0], k[1]);  // dy -> dx
    default: break;
  }
  KILN_CHECK(false) << "op " << op_name(n.op) << " has no convolution or pooling geometry";
  return {};
}

ConvGeometry conv_geometry(const Graph& g, const Node& n) {
  std::vector<Shape> shapes;
  for (ValueId in : n.inputs) shapes.push_back(g.node(in).shape);
  return conv_geometry(n, shapes);
}

}  // namespace kiln
