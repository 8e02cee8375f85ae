// tf.summary.FileWriter's event file (train/summary/event_file.h) for Python.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>

#include "module.h"
#include "tensor.h"
#include "train/summary/event_file.h"
#include "train/summary/events.h"
#include "train/summary/graph_def.h"

namespace py = pybind11;

namespace kiln::python {
namespace {
double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}
}  // namespace

void bind_summary(py::module_& m) {
  py::class_<EventFile>(m, "EventFile")
      .def(py::init<const std::string&>())
      .def("scalars",
           [](EventFile& f, int64_t step, const std::vector<std::pair<std::string, double>>& values) {
             std::vector<std::pair<std::string, float>> v;
             for (const auto& [k, x] : values) v.emplace_back(k, static_cast<float>(x));
             f.scalars(step, unix_seconds(), v);
           })
      .def("summary_bytes",
           [](EventFile& f, int64_t step, const py::bytes& b) { f.summary_bytes(step, unix_seconds(), std::string(b)); })
      .def("graph",
           [](EventFile& f, const std::shared_ptr<GraphScope>& s) {
             f.graph_def(unix_seconds(), graph_def_bytes(*s->graph));
           })
      .def("session_start", [](EventFile& f, int64_t step) { f.session_start(step, unix_seconds()); })
      .def("flush", [](EventFile& f) { f.flush(false); })
      .def_property_readonly("path", &EventFile::path);
  // kiln's IR of a tf.Graph as a GraphDef: serialized, or in protobuf's text format.
  m.def("graph_def", [](const std::shared_ptr<GraphScope>& s, bool as_text) -> py::object {
    if (as_text) return py::str(graph_def_text(*s->graph));
    return py::bytes(graph_def_bytes(*s->graph));
  });
  // A serialized Summary of scalars [(tag, value)] and the histograms and images of a
  // summaries.jsonl record's JSON (train/summary/events.h).
  m.def("summary_bytes",
        [](const std::vector<std::pair<std::string, double>>& scalars, const std::string& values_json) {
          std::vector<std::pair<std::string, float>> v;
          for (const auto& [k, x] : scalars) v.emplace_back(k, static_cast<float>(x));
          return py::bytes(summary_bytes(v, nlohmann::json::parse(values_json)));
        });
}

}  // namespace kiln::python
