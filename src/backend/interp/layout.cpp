// Layout kernels: reshape, transpose, broadcast, slice, pad, concat. They move elements
// without looking at them, so one byte-level gather serves every dtype.
#include <cstring>

#include "backend/interp/kernels.h"

namespace kiln::interp {
namespace {

// out[i] = x[src(i)] for every output element (src < 0 writes zero).
template <class F>
Array gather(const Node& n, const Array& x, F src) {
  Array out(n.dtype, n.shape);
  const size_t es = dtype_size(n.dtype);
  const std::byte* xp = x.bytes();
  std::byte* op = out.bytes();
  const int64_t count = out.numel();
#pragma omp parallel for if (count > 65536)
  for (int64_t i = 0; i < count; ++i) {
    const int64_t s = src(i);
    if (s >= 0) std::memcpy(op + i * es, xp + s * es, es);
  }
  return out;
}

// Coordinates of flat index i in shape s.
void unravel(int64_t i, const Shape& s, int64_t* coord) {
  for (size_t ax = s.size(); ax-- > 0;) {
    coord[ax] = i % s[ax];
    i /= s[ax];
  }
}

}  // namespace

Array interp_reshape(const Node& n, Inputs in) {
  Array out(n.dtype, n.shape);
  if (out.nbytes()) std::memcpy(out.bytes(), in[0]->bytes(), out.nbytes());
  return out;
}

Array interp_transpose(const Node& n, Inputs in) {
  const auto& perm = n.attrs.ints("perm");
  const auto ist = strides_of(in[0]->shape());
  const Shape& os = n.shape;
  return gather(n, *in[0], [&](int64_t i) {
    int64_t c[8], off = 0;
    unravel(i, os, c);
    for (size_t ax = 0; ax < os.size(); ++ax) off += c[ax] * ist[perm[ax]];
    return off;
  });
}

Array interp_broadcast_to(const Node& n, Inputs in) {
  BroadcastIndex idx(in[0]->shape(), n.shape);
  return gather(n, *in[0], [&](int64_t i) { return idx(i); });
}

Array interp_slice(const Node& n, Inputs in) {
  const auto& b = n.attrs.ints("begin");
  const auto ist = strides_of(in[0]->shape());
  return gather(n, *in[0], [&](int64_t i) {
    int64_t c[8], off = 0;
    unravel(i, n.shape, c);
    for (size_t ax = 0; ax < n.shape.size(); ++ax) off += (c[ax] + b[ax]) * ist[ax];
    return off;
  });
}

Array interp_pad(const Node& n, Inputs in) {
  const auto& lo = n.attrs.ints("low");
  const Shape& is = in[0]->shape();
  const auto ist = strides_of(is);
  return gather(n, *in[0], [&](int64_t i) -> int64_t {
    int64_t c[8], off = 0;
    unravel(i, n.shape, c);
    for (size_t ax = 0; ax < n.shape.size(); ++ax) {
      const int64_t k = c[ax] - lo[ax];
      if (k < 0 || k >= is[ax]) return -1;
      off += k * ist[ax];
    }
    return off;
  });
}

Array interp_concat(const Node& n, Inputs in) {
  const int64_t axis = n.attrs.i("axis");
  Array out(n.dtype, n.shape);
  const size_t es = dtype_size(n.dtype);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= n.shape[i];
  for (size_t i = axis + 1; i < n.shape.size(); ++i) inner *= n.shape[i];
  const int64_t out_row = n.shape[axis] * inner;
  int64_t at = 0;
  for (const Array* x : in) {
    const int64_t row = x->shape()[axis] * inner;
    for (int64_t o = 0; o < outer; ++o)
      if (row) std::memcpy(out.bytes() + (o * out_row + at) * es, x->bytes() + o * row * es, row * es);
    at += row;
  }
  return out;
}

}  // namespace kiln::interp
