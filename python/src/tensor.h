// The Python view of a graph under construction: a kiln::Tensor plus the scope of the
// model_fn call that made it. Graphs are built inside model_fn; a tensor kept after its
// model_fn returned, or mixed with one of another graph, is a clear error, never a
// dangling pointer.
#pragma once
#include <memory>
#include <string>

#include "kiln/ir/ops.h"

namespace kiln::python {

// One model_fn call's graph. `open` turns false when model_fn returns. A tf.Graph
// (kiln._core.new_graph) owns its graph through `owned` and stays open.
struct GraphScope {
  Graph* graph = nullptr;
  bool open = true;
  std::shared_ptr<Graph> owned;
};

struct PyTensor {
  Tensor t;
  std::shared_ptr<GraphScope> scope;
};

// The tensor's graph, checked open (ValueError naming `op` otherwise).
Graph& open_graph(const PyTensor& x, const char* op);
// Checks that every tensor of an op comes from one open graph.
void check_same_graph(const PyTensor& a, const PyTensor& b, const char* op);
PyTensor wrap(const PyTensor& like, Tensor t);

}  // namespace kiln::python
