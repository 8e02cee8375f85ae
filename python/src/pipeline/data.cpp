// kiln.data's C++ side: the description of a Dataset pipeline, the input_fn it becomes,
// and Fashion-MNIST as numpy arrays.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "input_sources.h"
#include "kiln/data/dataset.h"
#include "module.h"
#include "numpy_array.h"

namespace py = pybind11;

namespace kiln::python {

void bind_data(py::module_& m) {
  py::class_<SliceSpec>(m, "SliceSpec")
      .def(py::init<>())
      .def_readwrite("features", &SliceSpec::features)
      .def_readwrite("labels", &SliceSpec::labels)
      .def_readwrite("more", &SliceSpec::more)
      .def_readwrite("order", &SliceSpec::order)
      .def_readwrite("prefetch", &SliceSpec::prefetch);
  py::class_<SliceOrder>(m, "SliceOrder")
      .def(py::init<>())
      .def_readwrite("batch_size", &SliceOrder::batch_size)
      .def_readwrite("drop_remainder", &SliceOrder::drop_remainder)
      .def_readwrite("shuffle", &SliceOrder::shuffle)
      .def_readwrite("seed", &SliceOrder::seed)
      .def_readwrite("epochs", &SliceOrder::epochs)
      .def_readwrite("repeat_before_batch", &SliceOrder::repeat_before_batch);

  // The batches a SliceSpec yields (after skipping `skip`), at most `limit`, each
  // (features, labels, [(name, further feature)]): what training would see, for tests
  // and for users checking their pipeline.
  m.def("slice_batches", [](const SliceSpec& spec, int64_t limit, int64_t skip) {
    SliceSource source(spec);
    source.skip(skip);
    py::list out;
    data::Batch b;
    for (int64_t i = 0; i < limit && source.next(b); ++i) {
      py::list more;
      for (const data::NamedFeature& f : b.more) more.append(py::make_tuple(f.name, to_numpy(f.values)));
      out.append(py::make_tuple(to_numpy(b.features), b.labels.empty() ? py::object(py::none()) : py::object(to_numpy(b.labels)),
                                more));
    }
    return out;
  });

  m.def("load_fashion_mnist", [](const std::string& dir, const std::string& split) {
    if (split != "train" && split != "test")
      throw py::value_error("[load_fashion_mnist] split '" + split + "' is not one of: train, test");
    data::Dataset ds;
    {
      py::gil_scoped_release release;
      ds = data::load_fashion_mnist(dir, split == "train" ? data::Split::train : data::Split::test);
    }
    return py::make_tuple(into_numpy(std::move(ds.features)), into_numpy(std::move(ds.labels)));
  });
}

}  // namespace kiln::python
