// The text form of a graph: one node per line, deterministic, parseable.
//
//   kiln-graph v1
//   %0 = placeholder() {dtype="f32", shape=[256,784]} : f32[256,784] "x"
//   %1 = variable() {dtype="f32", init="glorot_uniform", seed=1, shape=[784,10]} : f32[784,10] "w"
//   %2 = matmul(%0, %1) {transpose_a=0, transpose_b=0} : f32[256,10]
//   output "logits" = %2
//
// The canonical form is what the compile cache hashes. It keeps only what determines
// the computation: nodes reachable from the outputs and the assigns, numbered in a
// depth-first order from those roots (outputs by name, assigns by variable name), and
// names only where they are interface (placeholders, variables, outputs). So creation
// order, dead nodes and names of intermediate values do not change it.
//
// The structure form is the canonical form with each hyperparameter's value (kiln/ir/ops.h)
// printed as `value=runtime` (an array constant's `data` too) and without how variables are
// initialised (only their dtype, shape and local/trainable flags): what the compile cache's
// key hashes, so that graphs which differ only in hyperparameter values, seeds or initial
// values share a compiled step. It is not parseable.
#pragma once
#include <string>
#include <string_view>

#include "kiln/ir/graph.h"

namespace kiln {

enum class TextForm { full, canonical, structure };

std::string print_graph(const Graph& g, TextForm form = TextForm::full);
// Parses the text form and verifies the result. Throws GraphError "[parse] line N: ...".
Graph parse_graph(std::string_view text);

}  // namespace kiln
