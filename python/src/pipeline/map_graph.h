// kiln._core.MapGraph: the graph of a Dataset.map / filter function, traced once from
// placeholders (one per numeric component of an element) and run for every element with
// no Python between its ops. Tiered: the first elements run on the interpreter (a short
// pipeline, a test, never waits for a compiler); once kTierUp elements have run, kiln's
// CPU backend compiles the graph on a thread of its own (through the compile cache when
// KILN_CACHE_DIR names one), and the elements after it is ready run compiled.
#pragma once
#include <pybind11/numpy.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kiln/backend/backend.h"
#include "kiln/ir/shape.h"
#include "tensor.h"

namespace kiln::python {

class MapGraph {
 public:
  // backend: "tiered" (the interpreter, then compiled), "interp" or "cpu" (compiled at once).
  MapGraph(std::string op, std::string backend);
  ~MapGraph();
  MapGraph(const MapGraph&) = delete;
  MapGraph& operator=(const MapGraph&) = delete;
  // "interp" or "cpu": what runs the next element (the interpreter also when compiling failed).
  std::string running() const { return compiled_ready_ && native_ ? "cpu" : "interp"; }
  const std::shared_ptr<GraphScope>& scope() const { return scope_; }

  PyTensor input(const std::string& dtype, Shape shape);
  void finish(const std::vector<PyTensor>& outputs);
  // One element, from Python: numpy inputs in input() order -> numpy outputs.
  std::vector<pybind11::array> run(const std::vector<pybind11::array>& values);
  // One element, from any thread (the C++ element loop): inputs already of the traced
  // dtypes and shapes. The interpreter runs side by side; the compiled step one at a time.
  std::vector<Array> run_arrays(std::vector<Array> values);

 private:
  struct Input {
    std::string name;
    DType dtype;
    Shape shape;
  };
  void compile();
  void count_run();

  std::string op_;
  Graph graph_;
  std::shared_ptr<GraphScope> scope_;
  std::vector<Input> inputs_;
  std::vector<std::string> outputs_;
  std::string backend_;
  std::unique_ptr<Executable> exe_;
  // The compiled step (or, if compiling failed, the interpreter make_executable fell back to).
  std::unique_ptr<Executable> compiled_;
  std::mutex compiled_mu_;  // a compiled step's arena holds one element at a time
  bool native_ = false;
  std::atomic<bool> compiled_ready_{false};
  std::atomic<int64_t> runs_{0};
  std::thread compiler_;
};

}  // namespace kiln::python
