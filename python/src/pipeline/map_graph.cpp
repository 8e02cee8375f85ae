// kiln._core.MapGraph (pipeline/map_graph.h).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "kiln/backend/backend.h"
#include "kiln/base/error.h"
#include "kiln/ir/ops.h"
#include "kiln/backend/runtime.h"
#include "kiln/ir/shape.h"
#include "module.h"
#include "numpy_array.h"
#include "pipeline/map_graph.h"
#include "tensor.h"

namespace py = pybind11;

namespace kiln::python {

namespace {
constexpr int64_t kTierUp = 256;  // elements on the interpreter before the compiled step is made
}  // namespace

MapGraph::MapGraph(std::string op, std::string backend)
    : op_(std::move(op)), scope_(std::make_shared<GraphScope>()), backend_(std::move(backend)) {
  if (backend_ != "tiered" && backend_ != "interp" && backend_ != "cpu")
    throw py::value_error("[" + op_ + "] backend '" + backend_ + "' is not one of tiered, interp, cpu");
  scope_->graph = &graph_;
}

MapGraph::~MapGraph() {
  scope_->open = false;
  if (compiler_.joinable()) compiler_.join();
}

PyTensor MapGraph::input(const std::string& dtype, Shape shape) {
  if (!scope_->open) throw py::value_error("[" + op_ + "] the function has been traced");
  const std::string name = "in" + std::to_string(inputs_.size());
  inputs_.push_back({name, parse_dtype(dtype), shape});
  return PyTensor{placeholder(graph_, name, parse_dtype(dtype), shape), scope_};
}

void MapGraph::finish(const std::vector<PyTensor>& outputs) {
  for (const auto& o : outputs) {
    if (o.scope != scope_)
      throw py::value_error("[" + op_ + "] the function returned a tensor of another graph (one made outside it)");
    outputs_.push_back("out" + std::to_string(outputs_.size()));
    graph_.add_output(outputs_.back(), o.t.id());
  }
  for (size_t i = 0; i < graph_.size(); ++i) {
    const Node& n = graph_.node(static_cast<ValueId>(i));
    if (n.op == Op::variable || n.op == Op::assign)
      throw py::value_error("[" + op_ + "] the function makes " + std::string(n.op == Op::variable ? "variable" : "an assign to") +
                            (n.name.empty() ? "" : " '" + n.name + "'") +
                            "; a map function computes from its element only (variables belong in model_fn)");
  }
  scope_->open = false;
  exe_ = make_interpreter(graph_);
  if (backend_ == "cpu") compile();
}

void MapGraph::count_run() {
  if (backend_ == "tiered" && ++runs_ == kTierUp) compiler_ = std::thread([this] { compile(); });
}

std::vector<py::array> MapGraph::run(const std::vector<py::array>& values) {
  if (!exe_) throw py::value_error("[" + op_ + "] the function has not been traced");
  if (values.size() != inputs_.size())
    throw py::value_error("[" + op_ + "] " + std::to_string(values.size()) + " inputs for a function of " +
                          std::to_string(inputs_.size()));
  std::vector<Array> arrays;
  for (size_t i = 0; i < values.size(); ++i) {
    Array a = to_array(values[i], "a map function's input");
    if (a.dtype() != inputs_[i].dtype || a.shape() != inputs_[i].shape)
      throw py::value_error("[" + op_ + "] input " + std::to_string(i) + " is " + std::string(dtype_name(a.dtype())) +
                            shape_str(a.shape()) + "; the function was traced for " +
                            std::string(dtype_name(inputs_[i].dtype)) + shape_str(inputs_[i].shape));
    arrays.push_back(std::move(a));
  }
  std::vector<Array> out;
  {
    py::gil_scoped_release release;
    out = run_arrays(std::move(arrays));
  }
  std::vector<py::array> result;
  for (auto& a : out) result.push_back(into_numpy(std::move(a)));
  return result;
}

std::vector<Array> MapGraph::run_arrays(std::vector<Array> values) {
  if (!exe_ || values.size() != inputs_.size())
    KILN_THROW(ConfigError) << "[" << op_ << "] " << values.size() << " inputs for a function of " << inputs_.size()
                            << (exe_ ? "" : " (not traced yet)");
  Feeds feeds;
  for (size_t i = 0; i < values.size(); ++i) feeds.emplace(inputs_[i].name, std::move(values[i]));
  count_run();
  Variables none;
  Fetches out;
  if (compiled_ready_) {
    std::lock_guard<std::mutex> lock(compiled_mu_);
    out = compiled_->run(feeds, none);
  } else {
    out = exe_->run(feeds, none);
  }
  std::vector<Array> result;
  for (const auto& name : outputs_) result.push_back(std::move(out.at(name)));
  return result;
}

void MapGraph::compile() {
  BackendOptions o;
  o.backend = Backend::cpu;
  o.compile.name = "map";
  o.compile = with_environment_defaults(o.compile);
  o.compile.compile_jobs = 1;  // beside a training step: one compiler process
  CompileReport report;
  o.report = &report;
  compiled_ = make_executable(graph_, o);
  native_ = report.fallback.empty();
  compiled_ready_ = true;
}

void bind_map_graph(py::module_& m) {
  py::class_<MapGraph, std::shared_ptr<MapGraph>>(m, "MapGraph")
      .def(py::init<std::string, std::string>(), py::arg("op"), py::arg("backend") = "tiered")
      .def_property_readonly("running", &MapGraph::running)
      .def_property_readonly("scope", &MapGraph::scope)
      .def("input", &MapGraph::input)
      .def("finish", &MapGraph::finish)
      .def("run", &MapGraph::run);
}

}  // namespace kiln::python
