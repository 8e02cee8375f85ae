// kiln::Error and its subclasses as Python exceptions. Configuration and graph errors are
// ValueErrors (the message starts with the option in brackets); data and checkpoint
// errors have their own types; kiln bugs are RuntimeErrors.
#include <pybind11/pybind11.h>

#include "kiln/train/checkpoint.h"
#include "kiln/base/error.h"
#include "kiln/train/hooks.h"
#include "module.h"

namespace py = pybind11;

namespace kiln::python {

void bind_errors(py::module_& m) {
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<ConfigError> config_error(m, "ConfigError", PyExc_ValueError);
  static py::exception<GraphError> graph_error(m, "GraphError", PyExc_ValueError);
  static py::exception<DataError> data_error(m, "DataError", error.ptr());
  static py::exception<CheckpointError> checkpoint_error(m, "CheckpointError", error.ptr());
  static py::exception<SystemError> system_error(m, "SystemError", PyExc_OSError);
  static py::exception<NanLossError> nan_loss_error(m, "NanLossError", error.ptr());
  static py::exception<InternalError> internal_error(m, "InternalError", error.ptr());
  // Most derived first: pybind11 tries translators from the last registered.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConfigError& e) {
      config_error(e.what());
    } catch (const GraphError& e) {
      graph_error(e.what());
    } catch (const DataError& e) {
      data_error(e.what());
    } catch (const CheckpointError& e) {
      checkpoint_error(e.what());
    } catch (const SystemError& e) {
      system_error(e.what());
    } catch (const NanLossError& e) {
      nan_loss_error(e.what());
    } catch (const InternalError& e) {
      internal_error(e.what());
    } catch (const Error& e) {
      error(e.what());
    }
  });
}

}  // namespace kiln::python
