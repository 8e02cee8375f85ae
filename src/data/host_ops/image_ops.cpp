#include "data/host_ops/image_ops.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "kiln/base/error.h"

namespace kiln::data {

namespace {

template <class T>
void scale_to_unit(const HostValue& x, float* out, float scale) {
  const T* in = reinterpret_cast<const T*>(x.raw());
  for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = static_cast<float>(in[i]) * scale;
}

template <size_t P>
void mirror_pixels(uint8_t* out, const uint8_t* in, int64_t w) {
  for (int64_t x = 0; x < w; ++x) std::memcpy(out + x * P, in + (w - 1 - x) * P, P);
}

// A row of w pixels of `pixel` bytes, right to left (a fixed-size copy per pixel for the
// usual sizes: one to four channels of 8-bit, 16-bit or float samples).
void mirror_row(uint8_t* out, const uint8_t* in, int64_t w, size_t pixel) {
  switch (pixel) {
    case 1: return mirror_pixels<1>(out, in, w);
    case 2: return mirror_pixels<2>(out, in, w);
    case 3: return mirror_pixels<3>(out, in, w);
    case 4: return mirror_pixels<4>(out, in, w);
    case 6: return mirror_pixels<6>(out, in, w);
    case 8: return mirror_pixels<8>(out, in, w);
    case 12: return mirror_pixels<12>(out, in, w);
    case 16: return mirror_pixels<16>(out, in, w);
    default:
      for (int64_t x = 0; x < w; ++x) std::memcpy(out + x * pixel, in + static_cast<size_t>(w - 1 - x) * pixel, pixel);
  }
}

// Reverses axis `axis` of image `i` (of `images` stacked along a leading axis, or the one image).
void flip_image(HostValue& v, const HostValue& x, int64_t i, int axis) {
  const size_t item = x.itemsize();
  const size_t r = x.shape.size();
  const int64_t h = x.shape[r - 3], w = x.shape[r - 2], c = x.shape[r - 1];
  const size_t pixel = static_cast<size_t>(c) * item, row = static_cast<size_t>(w) * pixel;
  const uint8_t* in = x.raw() + static_cast<size_t>(i * h) * row;
  uint8_t* out = v.raw() + static_cast<size_t>(i * h) * row;
  for (int64_t y = 0; y < h; ++y) {
    if (axis == 0) {
      std::memcpy(out + static_cast<size_t>(y) * row, in + static_cast<size_t>(h - 1 - y) * row, row);
      continue;
    }
    mirror_row(out + static_cast<size_t>(y) * row, in + static_cast<size_t>(y) * row, w, pixel);
  }
}

}  // namespace

HostValue image_value(formats::Image&& img) {
  const std::vector<int64_t> shape{img.height, img.width, img.channels};
  HostValue v;
  v.shape = shape;
  if (img.bits == 16) {
    v.dtype = "u2";
    v.data = std::make_shared<std::vector<uint8_t>>(img.pixels16.size() * 2);
    std::memcpy(v.data->data(), img.pixels16.data(), v.data->size());
  } else {
    v.dtype = "u1";
    v.data = std::make_shared<std::vector<uint8_t>>(std::move(img.pixels));
  }
  return v;
}

HostValue convert_image(const HostValue& x, const std::string& to) {
  if (x.dtype == to) return x;
  if (to != "f4") KILN_THROW(ConfigError) << "[convert_image_dtype] to " << to << " on the host";
  HostValue v = HostValue::numeric("f4", x.shape);
  float* out = reinterpret_cast<float*>(v.raw());
  if (x.dtype == "u1") scale_to_unit<uint8_t>(x, out, static_cast<float>(1.0 / 255));
  else if (x.dtype == "u2") scale_to_unit<uint16_t>(x, out, static_cast<float>(1.0 / 65535));
  else if (x.dtype == "i1") scale_to_unit<int8_t>(x, out, static_cast<float>(1.0 / 127));
  else if (x.dtype == "i2") scale_to_unit<int16_t>(x, out, static_cast<float>(1.0 / 32767));
  else if (x.dtype == "i4") scale_to_unit<int32_t>(x, out, static_cast<float>(1.0 / 2147483647));
  else if (x.dtype == "f2") scale_to_unit<_Float16>(x, out, 1.0f);  // floats to float32: a plain conversion
  else if (x.dtype == "f8") scale_to_unit<double>(x, out, 1.0f);
  else KILN_THROW(ConfigError) << "[convert_image_dtype] of " << x.dtype << " to f4 on the host";
  return v;
}

// Trailing axes the window
// spans whole join the innermost partial one in a single copy per row (a crop of HWC
// copies one run of width * channels values per image row).
HostValue window(const HostValue& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& size) {
  HostValue v = HostValue::numeric(x.dtype, size);
  const size_t item = x.itemsize();
  const size_t rank = x.shape.size();
  std::vector<int64_t> stride(rank, 1);
  for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * x.shape[d];
  size_t inner = rank - 1;  // the run: axes inner.. (those after it whole)
  while (inner > 0 && size[inner] == x.shape[inner]) --inner;
  const size_t run = static_cast<size_t>(size[inner] * stride[inner]) * item;
  int64_t rows = 1;
  for (size_t d = 0; d < inner; ++d) rows *= size[d];
  std::vector<int64_t> at(inner, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += (begin[d] + (d < inner ? at[d] : 0)) * stride[d];
    std::memcpy(v.raw() + static_cast<size_t>(r) * run, x.raw() + static_cast<size_t>(offset) * item, run);
    for (size_t d = inner; d-- > 0;) {
      if (++at[d] < size[d]) break;
      at[d] = 0;
    }
  }
  return v;
}

HostValue random_crop(const HostValue& x, const std::vector<int64_t>& size, HostDraws& draws) {
  bool fits = size.size() == x.shape.size() && !x.shape.empty();
  for (size_t d = 0; fits && d < size.size(); ++d) fits = size[d] >= 1 && size[d] <= x.shape[d];
  if (!fits) {
    auto list = [](const std::vector<int64_t>& v) {
      std::string t = "[";
      for (size_t i = 0; i < v.size(); ++i) t += (i ? ", " : "") + std::to_string(v[i]);
      return t + "]";
    };
    KILN_THROW(ConfigError) << "[random_crop] size " << list(size) << " must have one entry per axis of the value's shape "
                            << list(x.shape) << ", each from 1 to that axis' size";
  }
  std::vector<int64_t> begin;
  for (size_t d = 0; d < size.size(); ++d) begin.push_back(draws.integer(0, x.shape[d] - size[d] + 1));
  return window(x, begin, size);
}

HostValue random_flip(const HostValue& x, int axis, HostDraws& draws) {
  if (x.shape.size() != 3 && x.shape.size() != 4)
    KILN_THROW(ConfigError) << "[random_flip] takes an image [height, width, channels] or a batch of them; the value has "
                            << x.shape.size() << " axes";
  const int64_t images = x.shape.size() == 4 ? x.shape[0] : 1;
  std::vector<bool> mirror;
  for (int64_t i = 0; i < images; ++i) mirror.push_back(draws.uniform() < 0.5);
  if (images == 1 && x.shape.size() == 3 && !mirror[0]) return x;
  HostValue v = HostValue::numeric(x.dtype, x.shape);
  const size_t per_image = static_cast<size_t>(x.numel() / images) * x.itemsize();
  for (int64_t i = 0; i < images; ++i) {
    if (mirror[static_cast<size_t>(i)]) flip_image(v, x, i, axis);
    else std::memcpy(v.raw() + static_cast<size_t>(i) * per_image, x.raw() + static_cast<size_t>(i) * per_image, per_image);
  }
  return v;
}

HostValue central_crop(const HostValue& x, double fraction) {
  if (x.is_bytes || !x.data || (x.shape.size() != 3 && x.shape.size() != 4))
    KILN_THROW(ConfigError) << "[central_crop] takes an image [height, width, channels] or a batch of them";
  if (!(fraction > 0.0 && fraction <= 1.0))
    KILN_THROW(ConfigError) << "[central_crop] central_fraction " << fraction << " must be in (0, 1]";
  const size_t r = x.shape.size();
  const int64_t h = x.shape[r - 3], w = x.shape[r - 2];
  const auto offset = [fraction](int64_t n) {
    return static_cast<int64_t>((static_cast<double>(n) - static_cast<double>(n) * fraction) / 2);
  };
  std::vector<int64_t> begin(r, 0), size = x.shape;
  begin[r - 3] = offset(h);
  begin[r - 2] = offset(w);
  size[r - 3] = h - 2 * begin[r - 3];
  size[r - 2] = w - 2 * begin[r - 2];
  if (size[r - 3] < 1 || size[r - 2] < 1)
    KILN_THROW(ConfigError) << "[central_crop] central_fraction " << fraction << " leaves nothing of a " << h << " x "
                            << w << " image";
  return window(x, begin, size);
}

}  // namespace kiln::data
