#include "numpy_array.h"

#include <cstring>
#include <string>

namespace py = pybind11;

namespace kiln::python {

DType dtype_of(const py::array& a, const char* what) {
  const py::dtype d = a.dtype();
  if (d.is(py::dtype::of<float>())) return DType::f32;
  if (d.is(py::dtype::of<int32_t>())) return DType::i32;
  if (d.is(py::dtype::of<int64_t>())) return DType::i64;
  if (d.is(py::dtype::of<bool>())) return DType::boolean;
  if (d.kind() == 'f' && d.itemsize() == 2) return DType::f16;
  throw py::type_error(std::string(what) + ": numpy dtype " + py::str(static_cast<py::handle>(d)).cast<std::string>() +
                       " is not one kiln holds (float32, float16, int32, int64, bool)");
}

Array to_array(const py::array& a, const char* what) {
  const DType t = dtype_of(a, what);
  if (!(a.flags() & py::array::c_style))
    throw py::value_error(std::string(what) + ": the array is not C-contiguous");
  Shape shape(a.shape(), a.shape() + a.ndim());
  Array out = Array::uninitialized(t, shape);
  if (out.nbytes() > 0) std::memcpy(out.bytes(), a.data(), out.nbytes());
  return out;
}

namespace {
py::dtype numpy_dtype(DType t) {
  switch (t) {
    case DType::f32: return py::dtype::of<float>();
    case DType::f16: return py::dtype("float16");
    case DType::i32: return py::dtype::of<int32_t>();
    case DType::i64: return py::dtype::of<int64_t>();
    case DType::boolean: return py::dtype::of<bool>();
    case DType::bf16: break;
  }
  return py::dtype::of<float>();
}

py::array bf16_as_float(const Array& a) {
  py::array_t<float> out(std::vector<py::ssize_t>(a.shape().begin(), a.shape().end()));
  float* dst = out.mutable_data();
  for (int64_t i = 0; i < a.numel(); ++i) dst[i] = static_cast<float>(a.get(i));
  return out;
}
}  // namespace

py::array to_numpy(const Array& a) {
  if (a.dtype() == DType::bf16) return bf16_as_float(a);
  py::array out(numpy_dtype(a.dtype()), std::vector<py::ssize_t>(a.shape().begin(), a.shape().end()));
  if (a.nbytes() > 0) std::memcpy(out.mutable_data(), a.bytes(), a.nbytes());
  return out;
}

py::array into_numpy(Array&& a) {
  if (a.dtype() == DType::bf16) return bf16_as_float(a);
  auto* owned = new Array(std::move(a));
  py::capsule keep(owned, [](void* p) { delete static_cast<Array*>(p); });
  return py::array(numpy_dtype(owned->dtype()), std::vector<py::ssize_t>(owned->shape().begin(), owned->shape().end()),
                   owned->bytes(), keep);
}

}  // namespace kiln::python
