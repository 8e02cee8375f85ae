// Convolution and pooling, NCHW / OIHW, written as the textbook loops (accumulating in
// double). They are the oracle, not the fast path.
#include <cmath>
#include <limits>

#include "backend/interp/kernels.h"
#include "ir/conv_geometry.h"

namespace kiln::interp {
namespace {

using Geom = ConvGeometry;

Geom geometry(const Node& node, Inputs in) {
  std::vector<Shape> shapes;
  for (const Array* a : in) shapes.push_back(a->shape());
  return conv_geometry(node, shapes);
}

// Calls f(y_index, x_index, w_index) for every tap of the convolution that reads an
// in-bounds input element, for batch element b. All three conv kernels are this loop.
// Output channel o reads the cg input channels of its group, filter w[o, 0..cg).
template <class F>
void for_taps(const Geom& g, int64_t b, F f) {
  const int64_t cg = g.c / g.groups, og = g.o / g.groups;
  for (int64_t o = 0; o < g.o; ++o)
    for (int64_t i = 0; i < g.oh; ++i)
      for (int64_t j = 0; j < g.ow; ++j) {
        const int64_t yi = ((b * g.o + o) * g.oh + i) * g.ow + j;
        for (int64_t k = 0; k < cg; ++k) {
          const int64_t c = o / og * cg + k;
          for (int64_t p = 0; p < g.kh; ++p) {
            const int64_t hi = i * g.sh - g.ph + p;
            if (hi < 0 || hi >= g.h) continue;
            for (int64_t q = 0; q < g.kw; ++q) {
              const int64_t wi = j * g.sw - g.pw + q;
              if (wi < 0 || wi >= g.w) continue;
              f(yi, ((b * g.c + c) * g.h + hi) * g.w + wi, ((o * cg + k) * g.kh + p) * g.kw + q);
            }
          }
        }
      }
}

Array from_doubles(const Node& node, const std::vector<double>& acc) {
  FloatOut out(node.dtype, node.shape);
  for (size_t i = 0; i < acc.size(); ++i) out.data()[i] = static_cast<float>(acc[i]);
  return out.finish();
}
}  // namespace

// y[b,o,i,j] = sum over (c,p,q) of x[b,c,i*sh-ph+p,j*sw-pw+q] * w[o,c,p,q]
Array interp_conv2d(const Node& node, Inputs in) {
  const Geom g = geometry(node, in);
  FloatIn x(*in[0]), w(*in[1]);
  std::vector<double> acc(numel(node.shape), 0.0);
#pragma omp parallel for
  for (int64_t b = 0; b < g.n; ++b)
    for_taps(g, b, [&](int64_t yi, int64_t xi, int64_t wi) { acc[yi] += double(x[xi]) * w[wi]; });
  return from_doubles(node, acc);
}

// conv2d + bias[o], then ReLU if asked, before the one rounding to the type.
Array interp_conv2d_bias(const Node& node, Inputs in) {
  const Geom g = geometry(node, in);
  FloatIn x(*in[0]), w(*in[1]), bias(*in[2]);
  std::vector<double> acc(numel(node.shape), 0.0);
  const bool relu = node.attrs.i("relu") != 0;
  const int64_t plane = g.oh * g.ow;
#pragma omp parallel for
  for (int64_t b = 0; b < g.n; ++b) {
    for_taps(g, b, [&](int64_t yi, int64_t xi, int64_t wi) { acc[yi] += double(x[xi]) * w[wi]; });
    for (int64_t i = b * g.o * plane; i < (b + 1) * g.o * plane; ++i) {
      // The bias is added to the float32 accumulator, as oneDNN's post-op does.
      const double v = static_cast<float>(acc[i]) + bias[(i / plane) % g.o];
      acc[i] = relu && v < 0 ? 0.0 : v;
    }
  }
  return from_doubles(node, acc);
}

// dx[b,c,hi,wi] = sum over the taps that read x[b,c,hi,wi] of dy * w
Array interp_conv2d_backward_input(const Node& node, Inputs in) {
  const Geom g = geometry(node, in);
  FloatIn dy(*in[0]), w(*in[1]);
  std::vector<double> acc(numel(node.shape), 0.0);
#pragma omp parallel for
  for (int64_t b = 0; b < g.n; ++b)
    for_taps(g, b, [&](int64_t yi, int64_t xi, int64_t wi) { acc[xi] += double(dy[yi]) * w[wi]; });
  return from_doubles(node, acc);
}

// dw[o,c,p,q] = sum over the taps that use w[o,c,p,q] of dy * x (batch elements in turn:
// they all write every dw element).
Array interp_conv2d_backward_filter(const Node& node, Inputs in) {
  const Geom g = geometry(node, in);
  FloatIn x(*in[0]), dy(*in[1]);
  std::vector<double> acc(numel(node.shape), 0.0);
  for (int64_t b = 0; b < g.n; ++b)
    for_taps(g, b, [&](int64_t yi, int64_t xi, int64_t wi) { acc[wi] += double(dy[yi]) * x[xi]; });
  return from_doubles(node, acc);
}

namespace {
// Calls f(out_index, in_index) for every in-bounds window position of every output.
template <class F>
void for_windows(const Geom& g, F f) {
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t i = 0; i < g.oh; ++i)
        for (int64_t j = 0; j < g.ow; ++j) {
          const int64_t oi = ((b * g.c + c) * g.oh + i) * g.ow + j;
          for (int64_t p = 0; p < g.kh; ++p) {
            const int64_t hi = i * g.sh - g.ph + p;
            if (hi < 0 || hi >= g.h) continue;
            for (int64_t q = 0; q < g.kw; ++q) {
              const int64_t wi = j * g.sw - g.pw + q;
              if (wi < 0 || wi >= g.w) continue;
              f(oi, ((b * g.c + c) * g.h + hi) * g.w + wi);
            }
          }
        }
}
}  // namespace

Array interp_max_pool2d(const Node& node, Inputs in) {
  const Geom g = geometry(node, in);
  FloatIn x(*in[0]);
  FloatOut out(node.dtype, node.shape);
  float* y = out.data();
  for (int64_t i = 0; i < numel(node.shape); ++i) y[i] = -std::numeric_limits<float>::infinity();
  for_windows(g, [&](int64_t oi, int64_t ii) {
    if (x[ii] > y[oi] || std::isnan(x[ii])) y[oi] = x[ii];
  });
  return out.finish();
}

// The gradient goes to the first position of each window that holds the maximum.
Array interp_max_pool2d_grad(const Node& node, Inputs in) {
  const Geom g = geometry(node, in);
  FloatIn x(*in[0]), dy(*in[1]);
  const int64_t outs = numel(in[1]->shape());
  std::vector<int64_t> arg(outs, -1);
  std::vector<float> best(outs, -std::numeric_limits<float>::infinity());
  for_windows(g, [&](int64_t oi, int64_t ii) {
    if (arg[oi] < 0 || x[ii] > best[oi]) {
      best[oi] = x[ii];
      arg[oi] = ii;
    }
  });
  std::vector<double> acc(numel(node.shape), 0.0);
  // positive=1 (the ReLU-mask pass): only maxima above 0 pass the gradient, as if the
  // result went through select(x > 0, ., 0).
  const bool positive = node.attrs.i_or("positive", 0) != 0;
  for (int64_t o = 0; o < outs; ++o)
    if (arg[o] >= 0 && (!positive || best[o] > 0)) acc[arg[o]] += dy[o];
  return from_doubles(node, acc);
}

Array interp_avg_pool2d(const Node& node, Inputs in) {
  const Geom g = geometry(node, in);
  FloatIn x(*in[0]);
  const int64_t outs = numel(node.shape);
  std::vector<double> sum(outs, 0.0);
  std::vector<int64_t> cnt(outs, 0);
  for_windows(g, [&](int64_t oi, int64_t ii) {
    sum[oi] += x[ii];
    ++cnt[oi];
  });
  FloatOut out(node.dtype, node.shape);
  for (int64_t o = 0; o < outs; ++o) out.data()[o] = static_cast<float>(sum[o] / cnt[o]);
  return out.finish();
}

Array interp_avg_pool2d_grad(const Node& node, Inputs in) {
  const Geom g = geometry(node, in);
  FloatIn dy(*in[0]);
  const int64_t outs = numel(in[0]->shape());
  std::vector<int64_t> cnt(outs, 0);
  for_windows(g, [&](int64_t oi, int64_t) { ++cnt[oi]; });
  std::vector<double> acc(numel(node.shape), 0.0);
  for_windows(g, [&](int64_t oi, int64_t ii) { acc[ii] += double(dy[oi]) / cnt[oi]; });
  return from_doubles(node, acc);
}

}  // namespace kiln::interp
