// tf.image.resize of an image held on the host (a decoded image of any size, in a
// Dataset.map function), with TensorFlow's arithmetic: bilinear interpolates along the
// width, then the height, in float32 (taps from float64 source coordinates, as
// TensorFlow's legacy and half-pixel modes place them) and returns float32; nearest keeps
// the dtype. One implementation for both element loops: kiln/_src/image.py calls it.
#pragma once
#include <cstdint>
#include <string>

#include "data/host_value.h"

namespace kiln::data {

struct ResizeSpec {
  int64_t height = 0, width = 0;
  bool nearest = false;  // else bilinear
  bool align_corners = false, half_pixel_centers = false;
};

// x: [height, width, channels] or [n, height, width, channels]. A value of other rank or a
// size below 1 is a ConfigError naming `op`.
HostValue resize(const HostValue& x, const ResizeSpec& spec, const std::string& op);

}  // namespace kiln::data
