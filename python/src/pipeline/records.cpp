// TFRecord files (formats/tfrecord.h) for Python: tf.io.TFRecordWriter and
// tf.python_io.tf_record_iterator.
#include <pybind11/pybind11.h>

#include "formats/tfrecord.h"
#include "module.h"

namespace py = pybind11;

namespace kiln::python {

void bind_records(py::module_& m) {
  using formats::RecordReader;
  using formats::RecordWriter;
  py::class_<RecordWriter>(m, "RecordWriter")
      .def(py::init([](const std::string& path, const std::string& compression) {
        return std::make_unique<RecordWriter>(path, formats::parse_compression(compression));
      }))
      .def("write", [](RecordWriter& w, const py::bytes& record) { w.write(std::string_view(record)); })
      .def("flush", [](RecordWriter& w) { w.flush(false); })
      .def("close", &RecordWriter::close);
  py::class_<RecordReader>(m, "RecordReader")
      .def(py::init([](const std::string& path, const std::string& compression) {
        return std::make_unique<RecordReader>(path, formats::parse_compression(compression));
      }))
      // The next record, or None at the end; a DataError naming file and offset when damaged.
      .def("next", [](RecordReader& r) -> py::object {
        std::string rec;
        bool more = false;
        {
          py::gil_scoped_release release;
          more = r.next(rec);
        }
        if (!more) return py::none();
        return py::bytes(rec);
      });
}

}  // namespace kiln::python
