// Image host ops of a Dataset.map function in C++ for the element loop
// (data/element_plan.h): a decoded image as a HostValue, convert_image_dtype to float32,
// windows (random_crop, central_crop, a crop box), random flips. Their draws come from
// HostDraws, as the Python forms' do (kiln/_src/image.py), so both loops give the same bits.
#pragma once
#include <cstdint>
#include <vector>

#include "data/host_draws.h"
#include "data/host_value.h"
#include "formats/image_decode.h"

namespace kiln::data {

// A decoded image: u1 (or u2 for 16-bit PNGs) [height, width, channels].
HostValue image_value(formats::Image&& img);

// convert_image_dtype of an integer image to float32: x * (1 / MAX) in float32, as the
// graph form computes; floats convert plainly. to: "f4" (ConfigError otherwise).
HostValue convert_image(const HostValue& x, const std::string& to);

// The window begin .. begin+size of x (every axis), contiguous.
HostValue window(const HostValue& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& size);

// tf.image.random_crop: a window of `size` at a drawn offset.
HostValue random_crop(const HostValue& x, const std::vector<int64_t>& size, HostDraws& draws);

// random_flip_up_down (axis 0) / random_flip_left_right (axis 1) of an image or a batch
// (one draw per image).
HostValue random_flip(const HostValue& x, int axis, HostDraws& draws);

// tf.image.central_crop: the central `fraction` (0, 1] of an image or a batch, with
// TensorFlow's offsets.
HostValue central_crop(const HostValue& x, double fraction);

}  // namespace kiln::data
