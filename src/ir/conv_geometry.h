// The geometry of a 2-D convolution or pooling window over NCHW tensors, defined once:
// shape inference computes output sizes with it, and the interpreter's kernels, the
// generated pooling loops and the oneDNN convolution wrappers read it from a node.
#pragma once
#include <cstdint>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln {

// Also the layout of the 14 numbers a generated step passes to Runtime::conv (abi.h):
// keep the members, their order and the absence of any others.
struct ConvGeometry {
  int64_t n, c, h, w;      // input x [n, c, h, w]
  int64_t o, kh, kw;       // output channels (pooling: c) and window; a filter is [o, c / groups, kh, kw]
  int64_t oh, ow;          // output extent: y [n, o, oh, ow]
  int64_t sh, sw, ph, pw;  // stride, and padding before the first row / column
  // Channel groups: output channels [k*o/groups, (k+1)*o/groups) read only input channels
  // [k*c/groups, (k+1)*c/groups). 1 for a full convolution and for pooling; c for a
  // depthwise convolution.
  int64_t groups = 1;

  // Elements of the filter: [o, c / groups, kh, kw].
  int64_t filter_size() const { return o * (c / groups) * kh * kw; }

  // The padding after the last row / column that the (floored) output size implies:
  // smaller than ph when the floor leaves input rows no window reads, even negative.
  int64_t far_ph() const { return (oh - 1) * sh + kh - h - ph; }
  int64_t far_pw() const { return (ow - 1) * sw + kw - w - pw; }

  bool operator==(const ConvGeometry&) const = default;
};

// How many window positions fit along an axis of `in` elements padded by `pad` on both
// sides: floor((in + 2 pad - window) / stride) + 1, when window <= in + 2 pad.
int64_t window_positions(int64_t in, int64_t window, int64_t stride, int64_t pad);

// The geometry of a kh x kw window with n's `stride` and `padding` attributes sliding
// over x (NCHW) and producing o channels: what inference uses before n has a shape.
// Does not validate; inference checks the attributes and that the window fits.
ConvGeometry window_geometry(const Node& n, const Shape& x, int64_t o, int64_t kh, int64_t kw);

// The geometry of an inferred node of a convolution or pooling family (Conv2D,
// Conv2DBias, Conv2DBackwardInput, Conv2DBackwardFilter, Pool2D, Pool2DGrad,
// AvgPool2DGrad), from its shape, its input shapes (in order) and its attributes.
ConvGeometry conv_geometry(const Node& n, const std::vector<Shape>& input_shapes);
ConvGeometry conv_geometry(const Graph& g, const Node& n);

}  // namespace kiln
