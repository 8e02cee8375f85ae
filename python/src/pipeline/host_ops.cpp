// Host ops whose one implementation serves both Dataset.map element loops: the Python
// loop (kiln/_src/distorted_box.py, kiln/_src/image.py) calls these, the C++ loop
// (data/element_plan.h) the same functions, so an element's values are the same bits.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "data/host_draws.h"
#include "data/host_ops/distorted_box.h"
#include "data/host_ops/resize.h"
#include "module.h"
#include "pipeline/host_values.h"

namespace py = pybind11;

namespace kiln::python {

data::DistortedBoxSettings box_settings(const py::dict& a) {
  data::DistortedBoxSettings b;
  b.covered = a["covered"].cast<float>();
  const auto aspect = a["aspect"].cast<std::vector<float>>(), area = a["area"].cast<std::vector<float>>();
  b.aspect_low = aspect.at(0);
  b.aspect_high = aspect.at(1);
  b.area_low = area.at(0);
  b.area_high = area.at(1);
  b.attempts = a["attempts"].cast<int>();
  b.use_image = a["use_image"].cast<bool>();
  return b;
}

data::ResizeSpec resize_spec(const py::dict& a) {
  data::ResizeSpec r;
  const auto size = a["size"].cast<std::vector<int64_t>>();
  if (size.size() != 2) throw py::value_error("[resize] size must be [new_height, new_width]");
  r.height = size[0];
  r.width = size[1];
  r.nearest = a["method"].cast<std::string>() == "nearest";
  r.align_corners = a["align_corners"].cast<bool>();
  r.half_pixel_centers = a["half_pixel_centers"].cast<bool>();
  return r;
}

void bind_host_ops(py::module_& m) {
  // image_size, bounding_boxes: numeric arrays; draws: the op's HostDraws; settings: as
  // box_settings takes them -> (begin, size, bboxes).
  m.def("sample_distorted_box", [](const py::handle& image_size, const py::handle& boxes, data::HostDraws& draws,
                                   const py::dict& settings) {
    const data::HostValue size = host_value(image_size), b = host_value(boxes);
    const std::vector<data::HostValue> out = data::sample_distorted_box(size, b, box_settings(settings), draws);
    return py::make_tuple(python_value(out[0]), python_value(out[1]), python_value(out[2]));
  });
  // image: [h, w, c] or [n, h, w, c]; attrs: as resize_spec takes them.
  m.def("resize_on_host", [](const py::handle& image, const py::dict& attrs, const std::string& op) {
    const data::HostValue x = host_value(image);
    const data::ResizeSpec s = resize_spec(attrs);
    data::HostValue out;
    {
      py::gil_scoped_release release;
      out = data::resize(x, s, op);
    }
    return python_value(out);
  });
}

}  // namespace kiln::python
