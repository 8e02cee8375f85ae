// How long the reference interpreter would take to run a graph once: a rough, deliberately
// pessimistic estimate, for deciding whether a graph that runs once or twice (the last,
// smaller batch of an evaluation or a prediction) is worth compiling.
#pragma once
#include "kiln/ir/graph.h"

namespace kiln {

// Seconds for one run of g on the interpreter: matmuls through oneDNN, convolutions and
// pooling as the interpreter's textbook loops, every other op element by element, plus a
// cost per node.
double interpreter_seconds(const Graph& g);

}  // namespace kiln
