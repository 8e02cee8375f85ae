// RunConfig and ExperimentalConfig (the seed's NPURunConfig) as plain records; the Python
// classes fill them from keyword arguments and validate() names the option on error.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "kiln/train/config.h"
#include "kiln/base/settings.h"
#include "module.h"

namespace py = pybind11;

namespace kiln::python {

void bind_config(py::module_& m) {
  py::class_<ExperimentalConfig>(m, "ExperimentalConfig")
      .def(py::init<>())
      .def_readwrite("graph_compiler_cache_dir", &ExperimentalConfig::graph_compiler_cache_dir)
      .def_readwrite("accelerate_train_mode", &ExperimentalConfig::accelerate_train_mode)
      .def_readwrite("cache_size_cap_bytes", &ExperimentalConfig::cache_size_cap_bytes)
      .def_readwrite("cache_strict", &ExperimentalConfig::cache_strict)
      .def_readwrite("graph_compiler_remote_cache", &ExperimentalConfig::graph_compiler_remote_cache)
      .def_readwrite("graph_compiler_remote_cache_key_file", &ExperimentalConfig::graph_compiler_remote_cache_key_file)
      .def_readwrite("accelerate_loss_window", &ExperimentalConfig::accelerate_loss_window)
      .def_readwrite("accelerate_max_low_share", &ExperimentalConfig::accelerate_max_low_share);

  py::class_<RunConfig>(m, "RunConfig")
      .def(py::init<>())
      .def_readwrite("experimental_config", &RunConfig::experimental_config)
      .def_readwrite("precision_mode", &RunConfig::precision_mode)
      .def_readwrite("precision_mode_v2", &RunConfig::precision_mode_v2)
      .def_readwrite("iterations_per_loop", &RunConfig::iterations_per_loop)
      .def_readwrite("model_dir", &RunConfig::model_dir)
      .def_readwrite("save_checkpoints_steps", &RunConfig::save_checkpoints_steps)
      .def_readwrite("keep_checkpoint_max", &RunConfig::keep_checkpoint_max)
      .def_readwrite("log_step_count_steps", &RunConfig::log_step_count_steps)
      .def_readwrite("save_summary_steps", &RunConfig::save_summary_steps)
      .def_readwrite("num_threads", &RunConfig::num_threads)
      .def_readwrite("all_reduce_bucket_bytes", &RunConfig::all_reduce_bucket_bytes)
      .def_readwrite("all_reduce_overlap", &RunConfig::all_reduce_overlap)
      .def_readwrite("random_seed", &RunConfig::random_seed)
      .def("validate", [](const RunConfig& c) { c.validate(); })
      .def("describe", [](const RunConfig& c, int64_t max_steps) { return describe(c, max_steps); });

  m.def("parse_byte_size", [](const std::string& text, const std::string& option) { return parse_byte_size(text, option); },
        py::arg("text"), py::arg("option") = "cache_size_cap_bytes");

  // The settings table (kiln/base/settings.h): Python reads the environment through it too.
  m.def("setting_value", &setting_value, py::arg("name"),
        "The environment's value of a setting of kiln's table, None when unset");
  m.def("setting_integer", &setting_integer, py::arg("name"), py::arg("min"), py::arg("max"),
        "A whole number from min to max, None when unset; ConfigError naming the setting otherwise");
  m.def("settings_table", [] {
    py::list out;
    for (const Setting& s : settings_table())
      out.append(py::dict(py::arg("name") = s.name, py::arg("valid") = s.valid, py::arg("unset") = s.fallback,
                          py::arg("doc") = s.doc, py::arg("layer") = s.layer, py::arg("owned") = s.owned));
    return out;
  });
}

}  // namespace kiln::python
