// kiln's IR as a TensorFlow GraphDef for TensorBoard's graph tab (tf.summary.FileWriter(logdir,
// sess.graph)): one NodeDef per node, named by its name (or "<op>_<id>" when it has none),
// its op kiln's op name, its inputs the input nodes' names. Nothing reads it back: it is
// for looking at.
#pragma once
#include <string>

#include "kiln/ir/graph.h"

namespace kiln {

std::string graph_def_bytes(const Graph& g);
// The same GraphDef in protobuf's text format (what tf.io.write_graph(as_text=True) writes).
std::string graph_def_text(const Graph& g);

}  // namespace kiln
