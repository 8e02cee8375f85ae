#include "data/host_ops/distorted_box.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <sstream>

#include "kiln/base/error.h"

namespace kiln::data {

namespace {

struct Rect {
  int64_t x0, y0, x1, y1;
  int64_t area() const { return (x1 - x0) * (y1 - y0); }
};

int64_t round_f(float v) { return static_cast<int64_t>(std::lrintf(v)); }

// A window of `aspect` and an area within [min_area, max_area], or nullopt: TensorFlow's
// GenerateRandomCrop, rounding included.
std::optional<Rect> random_window(HostDraws& draws, int64_t width, int64_t height, float min_area, float max_area,
                                  float aspect) {
  int64_t h = round_f(std::sqrt(min_area / aspect));
  int64_t max_h = round_f(std::sqrt(max_area / aspect));
  if (round_f(static_cast<float>(max_h) * aspect) > width) {
    max_h = static_cast<int64_t>((static_cast<double>(width) + 0.5 - 1e-7) / aspect);  // the tallest whose width fits
    if (round_f(static_cast<float>(max_h) * aspect) > width) --max_h;
  }
  max_h = std::min(max_h, height);
  h = std::min(h, max_h);
  if (h < max_h) h += draws.integer(0, max_h - h + 1);
  int64_t w = round_f(static_cast<float>(h) * aspect);
  float area = static_cast<float>(w * h);
  if (area < min_area) {
    ++h;
    w = round_f(static_cast<float>(h) * aspect);
    area = static_cast<float>(w * h);
  }
  if (area > max_area) {
    --h;
    w = round_f(static_cast<float>(h) * aspect);
    area = static_cast<float>(w * h);
  }
  if (area < min_area || area > max_area || w > width || h > height || w <= 0 || h <= 0) return std::nullopt;
  const int64_t y = h < height ? draws.integer(0, height - h) : 0;  // TensorFlow's draw: [0, height - h)
  const int64_t x = w < width ? draws.integer(0, width - w) : 0;
  return Rect{x, y, x + w, y + h};
}

bool covers(const Rect& window, const std::vector<Rect>& boxes, float fraction) {
  if (window.area() < 1) return false;
  for (const Rect& b : boxes) {
    const int64_t area = b.area();
    if (area < 1) continue;
    const int64_t iw = std::max<int64_t>(0, std::min(window.x1, b.x1) - std::max(window.x0, b.x0));
    const int64_t ih = std::max<int64_t>(0, std::min(window.y1, b.y1) - std::max(window.y0, b.y0));
    if (static_cast<float>(iw * ih) / static_cast<float>(area) >= fraction) return true;
  }
  return false;
}

std::vector<Rect> pixel_boxes(const HostValue& boxes, int64_t width, int64_t height, bool use_image) {
  if (boxes.is_bytes || !boxes.data) KILN_THROW(ConfigError) << "[sample_distorted_bounding_box] bounding_boxes are bytes";
  const int64_t n = boxes.numel();
  if (n && (boxes.shape.size() != 3 || boxes.shape[2] != 4)) {
    std::ostringstream s;
    for (size_t i = 0; i < boxes.shape.size(); ++i) s << (i ? ", " : "") << boxes.shape[i];
    KILN_THROW(ConfigError) << "[sample_distorted_bounding_box] bounding_boxes of shape (" << s.str()
                            << "): it is [batch, boxes, 4] (ymin, xmin, ymax, xmax)";
  }
  std::vector<float> v(static_cast<size_t>(n));
  cast_into(boxes, v.data());
  std::vector<Rect> out;
  for (int64_t i = 0; i < n; i += 4) {
    for (int64_t j = i; j < i + 4; ++j)
      if (!(v[static_cast<size_t>(j)] >= 0.0f && v[static_cast<size_t>(j)] <= 1.0f))
        KILN_THROW(ConfigError) << "[sample_distorted_bounding_box] every bounding box coordinate must be in [0, 1]; "
                                << "box " << i / 4 << " has " << v[static_cast<size_t>(j)];
    const float* b = v.data() + i;
    out.push_back({static_cast<int64_t>(b[1] * static_cast<float>(width)),
                   static_cast<int64_t>(b[0] * static_cast<float>(height)),
                   static_cast<int64_t>(b[3] * static_cast<float>(width)),
                   static_cast<int64_t>(b[2] * static_cast<float>(height))});
  }
  if (out.empty()) {
    if (!use_image)
      KILN_THROW(ConfigError) << "[sample_distorted_bounding_box] no bounding boxes were given; pass "
                              << "use_image_if_no_bounding_boxes=True to use the whole image as the box";
    out.push_back({0, 0, width, height});
  }
  return out;
}

// [a, b, c] in the dtype of `like` (image_size's).
HostValue three(const HostValue& like, int64_t a, int64_t b, int64_t c) {
  HostValue v = HostValue::numeric("i8", {3});
  const int64_t values[3] = {a, b, c};
  std::memcpy(v.raw(), values, sizeof values);
  return cast(v, like.dtype);
}

}  // namespace

std::vector<HostValue> sample_distorted_box(const HostValue& image_size, const HostValue& boxes,
                                            const DistortedBoxSettings& s, HostDraws& draws) {
  const std::vector<int64_t> size = host_ints(image_size, "sample_distorted_bounding_box");
  if (size.size() != 3 || size[0] < 1 || size[1] < 1)
    KILN_THROW(ConfigError) << "[sample_distorted_bounding_box] image_size must be [height, width, channels] with a "
                            << "height and width >= 1";
  const int64_t height = size[0], width = size[1];
  const std::vector<Rect> rects = pixel_boxes(boxes, width, height, s.use_image);
  const float pixels = static_cast<float>(width) * static_cast<float>(height);
  const float min_area = s.area_low * pixels, max_area = s.area_high * pixels;
  Rect window{0, 0, width, height};
  for (int i = 0; i < s.attempts; ++i) {
    const float aspect = draws.uniform_f32() * (s.aspect_high - s.aspect_low) + s.aspect_low;
    const std::optional<Rect> crop = random_window(draws, width, height, min_area, max_area, aspect);
    if (crop && covers(*crop, rects, s.covered)) {
      window = *crop;
      break;
    }
  }
  const int64_t y = window.y0, x = window.x0, h = window.y1 - window.y0, w = window.x1 - window.x0;
  std::vector<HostValue> out;
  out.push_back(three(image_size, y, x, 0));
  out.push_back(three(image_size, h, w, -1));
  HostValue box = HostValue::numeric("f4", {1, 1, 4});
  const float b[4] = {static_cast<float>(static_cast<double>(y) / static_cast<double>(height)),
                      static_cast<float>(static_cast<double>(x) / static_cast<double>(width)),
                      static_cast<float>(static_cast<double>(y + h) / static_cast<double>(height)),
                      static_cast<float>(static_cast<double>(x + w) / static_cast<double>(width))};
  std::memcpy(box.raw(), b, sizeof b);
  out.push_back(std::move(box));
  return out;
}

}  // namespace kiln::data
