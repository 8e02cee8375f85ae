// kiln._core.Tensor and GraphScope: handles to values of the graph model_fn is building.
#include "tensor.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "kiln/base/error.h"
#include "module.h"

namespace py = pybind11;

namespace kiln::python {

Graph& open_graph(const PyTensor& x, const char* op) {
  if (!x.scope || !x.t.valid()) throw py::value_error(std::string("[") + op + "] the tensor is empty");
  if (!x.scope->open)
    throw py::value_error(std::string("[") + op +
                          "] this tensor belongs to a model_fn call that has returned; kiln builds a new graph "
                          "for every mode and batch shape, so make tensors inside model_fn");
  return *x.scope->graph;
}

void check_same_graph(const PyTensor& a, const PyTensor& b, const char* op) {
  open_graph(a, op);
  open_graph(b, op);
  if (a.scope != b.scope)
    throw py::value_error(std::string("[") + op + "] the tensors come from different graphs (different model_fn calls)");
}

PyTensor wrap(const PyTensor& like, Tensor t) { return PyTensor{t, like.scope}; }

void bind_tensor(py::module_& m) {
  py::class_<GraphScope, std::shared_ptr<GraphScope>>(m, "GraphScope")
      .def_property_readonly("open", [](const GraphScope& s) { return s.open; })
      .def("find", [](const std::shared_ptr<GraphScope>& s, const std::string& name) -> py::object {
        if (!s->open) throw py::value_error("[get_tensor_by_name] the graph's model_fn call has returned");
        auto id = s->graph->find(name);
        if (!id) return py::none();
        return py::cast(PyTensor{Tensor(s->graph, *id), s});
      })
      .def("named_values", [](const GraphScope& s) {
        std::vector<std::string> names;
        for (const Node& n : s.graph->nodes())
          if (!n.name.empty()) names.push_back(n.name);
        return names;
      });

  py::class_<PyTensor>(m, "Tensor")
      .def_property_readonly("_shape", [](const PyTensor& x) {
        open_graph(x, "shape");
        return x.t.shape();
      })
      .def_property_readonly("_dtype", [](const PyTensor& x) {
        open_graph(x, "dtype");
        return std::string(dtype_name(x.t.dtype()));
      })
      .def_property_readonly("_name", [](const PyTensor& x) {
        open_graph(x, "name");
        return x.t.node().name;
      })
      .def_property_readonly("_op", [](const PyTensor& x) {
        open_graph(x, "op");
        return std::string(op_name(x.t.node().op));
      })
      .def_property_readonly("_scope", [](const PyTensor& x) { return x.scope; })
      .def_property_readonly("_id", [](const PyTensor& x) { return x.t.id(); })
      .def("_named", [](const PyTensor& x, const std::string& name) {
        open_graph(x, "name");
        return wrap(x, x.t.named(name));
      })
      .def("_same", [](const PyTensor& a, const PyTensor& b) { return a.scope == b.scope && a.t.id() == b.t.id(); });
}

}  // namespace kiln::python
