#include "backend/onednn/depthwise_loops.h"

#include <algorithm>

namespace kiln::onednn {
namespace {

// The window rows (or columns) p in [lo, hi) that read inside an input of
// `size` for output position i: 0 <= i*stride - pad + p < size.
struct Taps {
  int64_t lo, hi, at; // at: the input position of tap 0 (i*stride - pad)
};
Taps taps(int64_t i, int64_t stride, int64_t pad, int64_t window,
          int64_t size) {
  const int64_t at = i * stride - pad;
  return {std::max<int64_t>(0, -at), std::min<int64_t>(window, size - at), at};
}

// y = x * w, then + bias and ReLU where given.
void forward(const float *a, const float *b, float *out, const ConvGeom &g,
             const float *bias, bool relu) {
  const int64_t m = g.o / g.groups, xs = g.h * g.w, ys = g.oh * g.ow,
                ws = g.kh * g.kw;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t o = 0; o < g.o; ++o) {
      const float *x = a + (n * g.c + o / m) * xs;
      const float *w = b + o * ws;
      float *y = out + (n * g.o + o) * ys;
      for (int64_t i = 0; i < g.oh; ++i) {
        const Taps r = taps(i, g.sh, g.ph, g.kh, g.h);
        for (int64_t j = 0; j < g.ow; ++j) {
          const Taps c = taps(j, g.sw, g.pw, g.kw, g.w);
          float acc = 0;
          for (int64_t p = r.lo; p < r.hi; ++p)
            for (int64_t q = c.lo; q < c.hi; ++q)
              acc += x[(r.at + p) * g.w + c.at + q] * w[p * g.kw + q];
          if (bias)
            acc += bias[o];
          y[i * g.ow + j] = relu && acc < 0 ? 0.0f : acc;
        }
      }
    }
}

// dx from dy and w: each dx plane gathers its channel's m output planes.
void backward_input(const float *a, const float *b, float *out,
                    const ConvGeom &g) {
  const int64_t m = g.o / g.groups, xs = g.h * g.w, ys = g.oh * g.ow,
                ws = g.kh * g.kw;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t ch = 0; ch < g.c; ++ch) {
      float *dx = out + (n * g.c + ch) * xs;
      std::fill(dx, dx + xs, 0.0f);
      for (int64_t o = ch * m; o < (ch + 1) * m; ++o) {
        const float *dy = a + (n * g.o + o) * ys;
        const float *w = b + o * ws;
        for (int64_t i = 0; i < g.oh; ++i) {
          const Taps r = taps(i, g.sh, g.ph, g.kh, g.h);
          for (int64_t j = 0; j < g.ow; ++j) {
            const Taps c = taps(j, g.sw, g.pw, g.kw, g.w);
            const float v = dy[i * g.ow + j];
            for (int64_t p = r.lo; p < r.hi; ++p)
              for (int64_t q = c.lo; q < c.hi; ++q)
                dx[(r.at + p) * g.w + c.at + q] += v * w[p * g.kw + q];
          }
        }
      }
    }
}

// dw (and db) from x and dy: each output channel summed over the batch on one
// thread.
void backward_filter(const float *a, const float *b, float *out,
                     const ConvGeom &g, float *db) {
  const int64_t m = g.o / g.groups, xs = g.h * g.w, ys = g.oh * g.ow,
                ws = g.kh * g.kw;
#pragma omp parallel for schedule(static)
  for (int64_t o = 0; o < g.o; ++o) {
    float *dw = out + o * ws;
    std::fill(dw, dw + ws, 0.0f);
    float bias_sum = 0;
    for (int64_t n = 0; n < g.n; ++n) {
      const float *x = a + (n * g.c + o / m) * xs;
      const float *dy = b + (n * g.o + o) * ys;
      for (int64_t i = 0; i < g.oh; ++i) {
        const Taps r = taps(i, g.sh, g.ph, g.kh, g.h);
        for (int64_t j = 0; j < g.ow; ++j) {
          const Taps c = taps(j, g.sw, g.pw, g.kw, g.w);
          const float v = dy[i * g.ow + j];
          bias_sum += v;
          for (int64_t p = r.lo; p < r.hi; ++p)
            for (int64_t q = c.lo; q < c.hi; ++q)
              dw[p * g.kw + q] += v * x[(r.at + p) * g.w + c.at + q];
        }
      }
    }
    if (db)
      db[o] = bias_sum;
  }
}

} // namespace

void depthwise_loops(ConvPass pass, const float *a, const float *b, float *out,
                     const ConvGeom &g, const float *bias, bool relu,
                     float *db) {
  switch (pass) {
  case ConvPass::forward:
    return forward(a, b, out, g, bias, relu);
  case ConvPass::backward_input:
    return backward_input(a, b, out, g);
  case ConvPass::backward_filter:
    return backward_filter(a, b, out, g, db);
  }
}

} // namespace kiln::onednn
