// tf.image.sample_distorted_bounding_box: the random crop window of Inception-style
// training (ResNet, AlexNet, VGG on ImageNet), drawn on the host as TensorFlow's kernel
// draws it: up to `attempts` tries of an aspect ratio and an area within their ranges
// (float32 arithmetic, lrintf rounding), kept when the window covers at least `covered` of
// one of the given boxes, else the whole image. The draws come from HostDraws (keyed by
// the dataset's seed, the element's position, the rank and the op), not TensorFlow's
// generator. One implementation for both element loops: kiln/_src/distorted_box.py calls it.
#pragma once
#include <vector>

#include "data/host_draws.h"
#include "data/host_value.h"

namespace kiln::data {

struct DistortedBoxSettings {
  float covered = 0.1f;                       // min_object_covered, in [0, 1]
  float aspect_low = 0.75f, aspect_high = 1.33f;
  float area_low = 0.05f, area_high = 1.0f;
  int attempts = 100;
  bool use_image = false;  // use_image_if_no_bounding_boxes
};

// image_size: integers [height, width, channels]; boxes: float32 [batch, n, 4] of (ymin,
// xmin, ymax, xmax) in [0, 1], or empty. Returns begin [y, x, 0] and size [h, w, -1] in
// image_size's dtype, and the window as a float32 box [1, 1, 4]. Bad sizes or boxes are a
// ConfigError saying what is valid.
std::vector<HostValue> sample_distorted_box(const HostValue& image_size, const HostValue& boxes,
                                            const DistortedBoxSettings& settings, HostDraws& draws);

}  // namespace kiln::data
