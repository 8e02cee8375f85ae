// Host values of the Dataset.map element loops (data/host_value.h) to and from Python:
// bytes <-> bytes, numeric arrays <-> numpy arrays (a numpy view of the C++ buffer); and
// host-op attributes as kiln/_src/distorted_box.py and kiln/_src/image.py give them.
#pragma once
#include <pybind11/pybind11.h>

#include "data/host_ops/distorted_box.h"
#include "data/host_ops/resize.h"
#include "data/host_value.h"

namespace kiln::python {

data::HostValue host_value(const pybind11::handle& leaf);
pybind11::object python_value(const data::HostValue& v);
// {"covered", "aspect": [low, high], "area": [low, high], "attempts", "use_image"}
data::DistortedBoxSettings box_settings(const pybind11::dict& attrs);
// {"size": [height, width], "method": "bilinear" | "nearest", "align_corners", "half_pixel_centers"}
data::ResizeSpec resize_spec(const pybind11::dict& attrs);

}  // namespace kiln::python
