#include "data/host_ops/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kiln/base/error.h"

namespace kiln::data {

namespace {

double scale_of(int64_t n_in, int64_t n_out, bool align_corners) {
  return align_corners && n_out > 1 ? static_cast<double>(n_in - 1) / static_cast<double>(n_out - 1)
                                    : static_cast<double>(n_in) / static_cast<double>(n_out);
}

int64_t clip(int64_t j, int64_t n) { return std::min(std::max<int64_t>(j, 0), n - 1); }

struct Taps {
  std::vector<int64_t> lo, hi;
  std::vector<float> weight;  // of hi
};

Taps taps(int64_t n_in, int64_t n_out, bool align_corners, bool half_pixel) {
  const double scale = scale_of(n_in, n_out, align_corners);
  Taps t;
  for (int64_t i = 0; i < n_out; ++i) {
    const double x = half_pixel ? (static_cast<double>(i) + 0.5) * scale - 0.5 : static_cast<double>(i) * scale;
    const double lo = std::floor(x);
    t.lo.push_back(clip(static_cast<int64_t>(lo), n_in));
    t.hi.push_back(clip(static_cast<int64_t>(std::ceil(x)), n_in));
    t.weight.push_back(static_cast<float>(x - lo));
  }
  return t;
}

std::vector<int64_t> nearest(int64_t n_in, int64_t n_out, bool align_corners, bool half_pixel) {
  const double scale = scale_of(n_in, n_out, align_corners);
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n_out; ++i) {
    const double x = half_pixel ? (static_cast<double>(i) + 0.5) * scale : static_cast<double>(i) * scale;
    out.push_back(clip(static_cast<int64_t>(align_corners ? std::nearbyint(x) : std::floor(x)), n_in));
  }
  return out;
}

// One row along the width: out[x] = left + (right - left) * w, per channel (two roundings,
// as numpy's two operations would give).
template <int C>
void across_c(const float* row, const Taps& t, int64_t c_runtime, float* out) {
  const int64_t c = C > 0 ? C : c_runtime;
  for (size_t x = 0; x < t.lo.size(); ++x) {
    const float* l = row + t.lo[x] * c;
    const float* r = row + t.hi[x] * c;
    const float w = t.weight[x];
    for (int64_t k = 0; k < c; ++k) {
      const float p = (r[k] - l[k]) * w;
      out[static_cast<size_t>(x) * c + k] = l[k] + p;
    }
  }
}

void across(const float* row, const Taps& t, int64_t c, float* out) {
  if (c == 3) return across_c<3>(row, t, c, out);
  if (c == 1) return across_c<1>(row, t, c, out);
  across_c<0>(row, t, c, out);
}

// Each input row a tap reads, interpolated along the width once (neighbouring output rows
// share their input rows), then each output row from its two.
HostValue bilinear(const HostValue& image, int64_t images, const ResizeSpec& s) {
  const HostValue x = cast(image, "f4");
  const size_t r = x.shape.size();
  const int64_t h = x.shape[r - 3], w = x.shape[r - 2], c = x.shape[r - 1];
  std::vector<int64_t> shape = x.shape;
  shape[r - 3] = s.height;
  shape[r - 2] = s.width;
  HostValue v = HostValue::numeric("f4", shape);
  const Taps ty = taps(h, s.height, s.align_corners, s.half_pixel_centers);
  const Taps tx = taps(w, s.width, s.align_corners, s.half_pixel_centers);
  const size_t out_row = static_cast<size_t>(s.width * c);
  std::vector<float> rows(static_cast<size_t>(h) * out_row);
  std::vector<bool> needed(static_cast<size_t>(h), false);
  for (size_t y = 0; y < ty.lo.size(); ++y) needed[static_cast<size_t>(ty.lo[y])] = needed[static_cast<size_t>(ty.hi[y])] = true;
  for (int64_t n = 0; n < images; ++n) {
    const float* in = reinterpret_cast<const float*>(x.raw()) + n * h * w * c;
    for (int64_t y = 0; y < h; ++y)
      if (needed[static_cast<size_t>(y)]) across(in + y * w * c, tx, c, rows.data() + static_cast<size_t>(y) * out_row);
    float* out = reinterpret_cast<float*>(v.raw()) + static_cast<size_t>(n * s.height) * out_row;
    for (int64_t y = 0; y < s.height; ++y) {
      const float* top = rows.data() + static_cast<size_t>(ty.lo[static_cast<size_t>(y)]) * out_row;
      const float* bottom = rows.data() + static_cast<size_t>(ty.hi[static_cast<size_t>(y)]) * out_row;
      const float f = ty.weight[static_cast<size_t>(y)];
      float* o = out + static_cast<size_t>(y) * out_row;
      for (size_t k = 0; k < out_row; ++k) {
        const float p = (bottom[k] - top[k]) * f;
        o[k] = top[k] + p;
      }
    }
  }
  return v;
}

HostValue nearest_resize(const HostValue& x, int64_t images, const ResizeSpec& s) {
  const size_t r = x.shape.size();
  const int64_t h = x.shape[r - 3], w = x.shape[r - 2], c = x.shape[r - 1];
  const std::vector<int64_t> rows = nearest(h, s.height, s.align_corners, s.half_pixel_centers);
  const std::vector<int64_t> cols = nearest(w, s.width, s.align_corners, s.half_pixel_centers);
  std::vector<int64_t> shape = x.shape;
  shape[r - 3] = s.height;
  shape[r - 2] = s.width;
  HostValue v = HostValue::numeric(x.dtype, shape);
  const size_t pixel = static_cast<size_t>(c) * x.itemsize();
  uint8_t* out = v.raw();
  for (int64_t n = 0; n < images; ++n)
    for (int64_t y : rows)
      for (int64_t col : cols) {
        std::memcpy(out, x.raw() + static_cast<size_t>((n * h + y) * w + col) * pixel, pixel);
        out += pixel;
      }
  return v;
}

}  // namespace

HostValue resize(const HostValue& x, const ResizeSpec& s, const std::string& op) {
  if (x.is_bytes || !x.data || (x.shape.size() != 3 && x.shape.size() != 4))
    KILN_THROW(ConfigError) << "[" << op << "] takes an image [height, width, channels] or a batch of them; got "
                            << (x.is_bytes ? std::string("bytes") : std::to_string(x.shape.size()) + " axes");
  if (s.height < 1 || s.width < 1)
    KILN_THROW(ConfigError) << "[" << op << "] size [" << s.height << ", " << s.width
                            << "] must be [new_height, new_width], both >= 1";
  const int64_t images = x.shape.size() == 4 ? x.shape[0] : 1;
  return s.nearest ? nearest_resize(x, images, s) : bilinear(x, images, s);
}

}  // namespace kiln::data
