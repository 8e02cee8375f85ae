// Reductions over axes, accumulated in double.
#include <cmath>
#include <limits>

#include "backend/interp/kernels.h"

namespace kiln::interp {
namespace {

enum class Kind { sum, mean, max };

Array reduce(const Node& n, const Array& x, Kind kind) {
  const Shape& in = x.shape();
  std::vector<bool> reduced(in.size(), false);
  for (int64_t a : n.attrs.ints("axes")) reduced[a] = true;
  // Output strides laid over the input axes (0 on reduced axes).
  Shape kept;
  for (size_t i = 0; i < in.size(); ++i) kept.push_back(reduced[i] ? 1 : in[i]);
  const auto kst = strides_of(kept);
  const int64_t out_count = numel(kept);
  std::vector<double> acc(out_count, kind == Kind::max ? -std::numeric_limits<double>::infinity() : 0.0);
  std::vector<bool> nan(out_count, false);
  int64_t group = 1;
  for (size_t i = 0; i < in.size(); ++i)
    if (reduced[i]) group *= in[i];
  FloatIn xf(x);
  const bool fl = is_float(x.dtype());
  const int64_t count = x.numel();
  for (int64_t i = 0; i < count; ++i) {
    int64_t rem = i, off = 0;
    for (size_t ax = in.size(); ax-- > 0;) {
      const int64_t c = rem % in[ax];
      rem /= in[ax];
      if (!reduced[ax]) off += c * kst[ax];
    }
    const double v = fl ? double(xf[i]) : x.get(i);
    if (kind == Kind::max) {
      if (std::isnan(v)) nan[off] = true;
      if (v > acc[off]) acc[off] = v;
    } else {
      acc[off] += v;
    }
  }
  Array out(n.dtype, n.shape);
  for (int64_t o = 0; o < out_count; ++o) {
    double v = acc[o];
    if (kind == Kind::mean) v = group ? v / group : std::numeric_limits<double>::quiet_NaN();
    if (nan[o]) v = std::numeric_limits<double>::quiet_NaN();
    out.set(o, v);
  }
  return out;
}

}  // namespace

Array interp_reduce_sum(const Node& n, Inputs in) { return reduce(n, *in[0], Kind::sum); }
Array interp_reduce_mean(const Node& n, Inputs in) { return reduce(n, *in[0], Kind::mean); }
Array interp_reduce_max(const Node& n, Inputs in) { return reduce(n, *in[0], Kind::max); }

Array interp_argmax(const Node& n, Inputs in) {
  const Array& x = *in[0];
  const int64_t axis = n.attrs.i("axis");
  const Shape& s = x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= s[i];
  for (size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
  const int64_t len = s[axis];
  Array out(DType::i64, n.shape);
  auto* o = out.data<int64_t>();
  FloatIn xf(x);
  const bool fl = is_float(x.dtype());
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t b = 0; b < inner; ++b) {
      int64_t best = 0;
      double bv = 0;
      for (int64_t k = 0; k < len; ++k) {
        const int64_t idx = (a * len + k) * inner + b;
        const double v = fl ? double(xf[idx]) : x.get(idx);
        if (k == 0 || v > bv || (std::isnan(v) && !std::isnan(bv))) {  // first max; NaN wins
          bv = v;
          best = k;
        }
      }
      o[a * inner + b] = best;
    }
  return out;
}

Array interp_one_hot(const Node& n, Inputs in) {
  const Array& idx = *in[0];
  const int64_t depth = n.attrs.i("depth");
  Array out(n.dtype, n.shape);
  for (int64_t i = 0; i < idx.numel(); ++i) {
    const auto k = static_cast<int64_t>(idx.get(i));
    if (k >= 0 && k < depth) out.set(i * depth + k, 1.0);  // out of range: a zero row, as in TensorFlow
  }
  return out;
}

}  // namespace kiln::interp
