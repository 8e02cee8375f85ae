// The pieces of the kiln._core extension module, each bound in its own file.
#pragma once
#include <pybind11/pybind11.h>

namespace kiln::python {

void bind_errors(pybind11::module_& m);
void bind_tensor(pybind11::module_& m);
void bind_ops(pybind11::module_& m);
void bind_ops_tf(pybind11::module_& m);  // what TensorFlow's API needs beyond the builder (random, optimizers, ...)
void bind_config(pybind11::module_& m);
void bind_data(pybind11::module_& m);
void bind_estimator(pybind11::module_& m);
void bind_world(pybind11::module_& m);
void bind_summary(pybind11::module_& m);  // tf.summary.FileWriter
void bind_records(pybind11::module_& m);  // TFRecord files
void bind_example(pybind11::module_& m);  // tf.train.Example parsing
void bind_map_graph(pybind11::module_& m);  // Dataset.map's traced functions
void bind_image(pybind11::module_& m);  // decode_jpeg / decode_png
void bind_element_loop(pybind11::module_& m);  // Dataset.map's C++ element loop
void bind_host_ops(pybind11::module_& m);      // host ops shared by both element loops
void bind_session(pybind11::module_& m);       // tf.Graph, sess.run's step graphs, the session's variables
void bind_session_switch(pybind11::module_& m);  // accelerate_train_mode in sess.run mode

}  // namespace kiln::python
