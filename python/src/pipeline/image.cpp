// JPEG and PNG decoding (formats/image_decode.h) for kiln.image's host ops.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "formats/image_decode.h"
#include "kiln/base/error.h"
#include "module.h"

namespace py = pybind11;

namespace kiln::python {

namespace {
formats::Image image_of(const py::bytes& pixels, int64_t height, int64_t width, int64_t channels) {
  formats::Image i;
  i.height = height;
  i.width = width;
  i.channels = channels;
  const std::string p(pixels);
  i.pixels.assign(p.begin(), p.end());
  return i;
}
}  // namespace

void bind_image(py::module_& m) {
  py::class_<formats::Image>(m, "DecodedImage")
      .def_readonly("height", &formats::Image::height)
      .def_readonly("width", &formats::Image::width)
      .def_readonly("channels", &formats::Image::channels)
      .def_readonly("bits", &formats::Image::bits)
      .def_property_readonly("pixels", [](const formats::Image& i) {
        return py::bytes(reinterpret_cast<const char*>(i.pixels.data()), i.pixels.size());
      })
      .def_property_readonly("pixels16", [](const formats::Image& i) {
        return py::bytes(reinterpret_cast<const char*>(i.pixels16.data()), i.pixels16.size() * 2);
      });
  m.def("decode_jpeg", [](const py::bytes& data, int channels, const std::string& dct, bool fancy) {
    std::string d(data);
    py::gil_scoped_release release;
    return formats::decode_jpeg(d, channels, dct, fancy);
  });
  // tf.image.decode_and_crop_jpeg: crop is [y, x, height, width].
  m.def("decode_and_crop_jpeg", [](const py::bytes& data, std::vector<int64_t> crop, int channels,
                                   const std::string& dct, bool fancy) {
    if (crop.size() != 4)
      KILN_THROW(ConfigError) << "[decode_and_crop_jpeg] crop_window has " << crop.size()
                              << " entries; it is [offset_y, offset_x, height, width]";
    std::string d(data);
    const formats::CropWindow w{crop[0], crop[1], crop[2], crop[3]};
    py::gil_scoped_release release;
    return formats::decode_jpeg(d, channels, dct, fancy, &w);
  });
  m.def("jpeg_shape", [](const py::bytes& data) {
    const formats::JpegShape s = formats::jpeg_shape(std::string(data));
    return std::vector<int64_t>{s.height, s.width, s.components};
  });
  m.def("decode_png", [](const py::bytes& data, int channels, bool sixteen) {
    std::string d(data);
    py::gil_scoped_release release;
    return formats::decode_png(d, channels, sixteen);
  });
  m.def("looks_like_jpeg", [](const py::bytes& data) { return formats::looks_like_jpeg(std::string(data)); });
  m.def("looks_like_png", [](const py::bytes& data) { return formats::looks_like_png(std::string(data)); });
  // An 8-bit HWC image's bytes -> a JPEG file (tf.image.encode_jpeg) or a PNG file.
  m.def("encode_jpeg", [](const py::bytes& pixels, int64_t height, int64_t width, int64_t channels, int quality,
                          bool chroma_downsampling) {
    const formats::Image i = image_of(pixels, height, width, channels);
    std::string out;
    {
      py::gil_scoped_release release;
      out = formats::encode_jpeg(i, quality, chroma_downsampling);
    }
    return py::bytes(out);
  });
  m.def("encode_png", [](const py::bytes& pixels, int64_t height, int64_t width, int64_t channels) {
    return py::bytes(formats::encode_png(image_of(pixels, height, width, channels)));
  });
}

}  // namespace kiln::python
