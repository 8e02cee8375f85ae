// kiln._core: the C++ library as the Python package's building blocks. The Python
// modules (kiln/__init__.py, kiln.nn, kiln.train, ...) give it TensorFlow 1.x names.
#include "module.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "kiln's C++ graph compiler and training runtime (use the kiln package, not this module)";
  // pybind11 before 2.12 reads numpy 1.x arrays only: kiln/__init__.py refuses numpy 2 then.
  m.attr("PYBIND11_VERSION") = pybind11::make_tuple(PYBIND11_VERSION_MAJOR, PYBIND11_VERSION_MINOR);
  kiln::python::bind_world(m);  // first: under mpirun, join the job before anything else
  kiln::python::bind_errors(m);
  kiln::python::bind_tensor(m);
  kiln::python::bind_ops(m);
  kiln::python::bind_ops_tf(m);
  kiln::python::bind_config(m);
  kiln::python::bind_data(m);
  kiln::python::bind_estimator(m);
  kiln::python::bind_summary(m);
  kiln::python::bind_records(m);
  kiln::python::bind_example(m);
  kiln::python::bind_map_graph(m);
  kiln::python::bind_image(m);
  kiln::python::bind_element_loop(m);
  kiln::python::bind_host_ops(m);
  kiln::python::bind_session(m);
  kiln::python::bind_session_switch(m);
}
