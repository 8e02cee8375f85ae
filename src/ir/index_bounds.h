// Which fed values are indices, and into what: a placeholder whose integers reach, through
// ops that move elements without changing them (reshape, transpose, slice, broadcast_to,
// integer casts), the indices of a gather (rows of a table; not a lenient one, which
// stands for a one_hot times a matrix, see matmul in ops.h) or of a strict one_hot (the
// class ids of sparse_softmax_cross_entropy). An index outside the range would silently
// give a row of zeros (a loss of 0 for a class id of 100); TensorFlow raises on it. The
// Estimator checks every batch it feeds against these bounds (check_indices).
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "kiln/ir/array.h"
#include "kiln/ir/graph.h"

namespace kiln {

struct IndexBound {
  int64_t limit = 0;   // valid indices are 0 .. limit - 1
  std::string what;    // "the logits' 10 classes (sparse_softmax_cross_entropy)"
};

// Placeholder name -> the tightest bound its values must keep.
std::map<std::string, IndexBound> index_bounds(const Graph& g);

// DataError "[<name>] <where>, example E: index V is outside 0..limit-1, <what>" for the
// first value of `a` out of range; `where` says which batch ("batch 3 of the input").
// `a` holds examples along axis 0.
void check_indices(const std::string& name, const Array& a, const IndexBound& bound, const std::string& where);

}  // namespace kiln
