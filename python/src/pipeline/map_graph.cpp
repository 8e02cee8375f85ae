// kiln._core.MapGraph: the graph of a Dataset.map / filter function, traced once from
// placeholders (one per numeric component of an element) and run for every element with
// no Python between its ops. Tiered: the first elements run on the interpreter (a short
// pipeline, a test, never waits for a compiler); once kTierUp elements have run, kiln's
// CPU backend compiles the graph on a thread of its own (through the compile cache when
// KILN_CACHE_DIR names one), and the elements after it is ready run compiled.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "kiln/backend.h"
#include "kiln/error.h"
#include "kiln/ops.h"
#include "kiln/runtime.h"
#include "kiln/shape.h"
#include "module.h"
#include "numpy_array.h"
#include "tensor.h"

namespace py = pybind11;

namespace kiln::python {

namespace {

constexpr int64_t kTierUp = 256;  // elements on the interpreter before the compiled step is made

class MapGraph {
 public:
  // backend: "tiered" (the interpreter, then compiled), "interp" or "cpu" (compiled at once).
  MapGraph(std::string op, std::string backend)
      : op_(std::move(op)), scope_(std::make_shared<GraphScope>()), backend_(std::move(backend)) {
    if (backend_ != "tiered" && backend_ != "interp" && backend_ != "cpu")
      throw py::value_error("[" + op_ + "] backend '" + backend_ + "' is not one of tiered, interp, cpu");
    scope_->graph = &graph_;
  }
  ~MapGraph() {
    scope_->open = false;
    if (compiler_.joinable()) compiler_.join();
  }
  // "interp" or "cpu": what runs the next element (the interpreter also when compiling failed).
  std::string running() const { return compiled_ready_ && native_ ? "cpu" : "interp"; }

  const std::shared_ptr<GraphScope>& scope() const { return scope_; }

  PyTensor input(const std::string& dtype, Shape shape) {
    if (!scope_->open) throw py::value_error("[" + op_ + "] the function has been traced");
    const std::string name = "in" + std::to_string(inputs_.size());
    inputs_.push_back({name, parse_dtype(dtype), shape});
    return PyTensor{placeholder(graph_, name, parse_dtype(dtype), shape), scope_};
  }

  void finish(const std::vector<PyTensor>& outputs) {
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

  std::vector<py::array> run(const std::vector<py::array>& values) {
    if (!exe_) throw py::value_error("[" + op_ + "] the function has not been traced");
    if (values.size() != inputs_.size())
      throw py::value_error("[" + op_ + "] " + std::to_string(values.size()) + " inputs for a function of " +
                            std::to_string(inputs_.size()));
    Feeds feeds;
    for (size_t i = 0; i < values.size(); ++i) {
      Array a = to_array(values[i], "a map function's input");
      if (a.dtype() != inputs_[i].dtype || a.shape() != inputs_[i].shape)
        throw py::value_error("[" + op_ + "] input " + std::to_string(i) + " is " + std::string(dtype_name(a.dtype())) +
                              shape_str(a.shape()) + "; the function was traced for " +
                              std::string(dtype_name(inputs_[i].dtype)) + shape_str(inputs_[i].shape));
      feeds.emplace(inputs_[i].name, std::move(a));
    }
    if (backend_ == "tiered" && ++runs_ == kTierUp) compiler_ = std::thread([this] { compile(); });
    Fetches out;
    {
      py::gil_scoped_release release;
      Variables none;
      out = (compiled_ready_ ? compiled_ : exe_)->run(feeds, none);
    }
    std::vector<py::array> result;
    for (const auto& name : outputs_) result.push_back(into_numpy(std::move(out.at(name))));
    return result;
  }

 private:
  struct Input {
    std::string name;
    DType dtype;
    Shape shape;
  };
  std::string op_;
  Graph graph_;
  std::shared_ptr<GraphScope> scope_;
  std::vector<Input> inputs_;
  std::vector<std::string> outputs_;
  // The compiled step (or, if compiling failed, the interpreter make_executable fell back to).
  void compile() {
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

  std::string backend_;
  std::unique_ptr<Executable> exe_;
  std::unique_ptr<Executable> compiled_;
  bool native_ = false;
  std::atomic<bool> compiled_ready_{false};
  int64_t runs_ = 0;
  std::thread compiler_;
};

}  // namespace

void bind_map_graph(py::module_& m) {
  py::class_<MapGraph>(m, "MapGraph")
      .def(py::init<std::string, std::string>(), py::arg("op"), py::arg("backend") = "tiered")
      .def_property_readonly("running", &MapGraph::running)
      .def_property_readonly("scope", &MapGraph::scope)
      .def("input", &MapGraph::input)
      .def("finish", &MapGraph::finish)
      .def("run", &MapGraph::run);
}

}  // namespace kiln::python
